// Prints the partition sarama's default hash partitioner (NewHashPartitioner, FNV-1a) gives each key.
// Usage: sarama_partitions PARTITIONS < keys, one hex-encoded key per line; one partition per line out.
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"

	"github.com/IBM/sarama"
)

func main() {
	partitions, err := strconv.Atoi(os.Args[1])
	if err != nil {
		panic(err)
	}
	partitioner := sarama.NewHashPartitioner("erasure")
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		key, err := hex.DecodeString(scanner.Text())
		if err != nil {
			panic(err)
		}
		message := &sarama.ProducerMessage{Topic: "erasure", Key: sarama.ByteEncoder(key)}
		partition, err := partitioner.Partition(message, int32(partitions))
		if err != nil {
			panic(err)
		}
		fmt.Println(partition)
	}
}
