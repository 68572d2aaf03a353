import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DeleteRecordsOptions;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;

/**
 * Kafka's own Java Admin client deleting records, for bench/service_bench.py (--kafka real). Run with
 * Java's source launcher and Kafka's class path:
 *
 *   java -cp $(cat ~/.cache/kafka-purge/kafka.classpath) bench/DeleteRecordsBench.java \
 *       BOOTSTRAP ADMIN_PROPERTIES TOPIC PARTITIONS
 *
 * Connects, warms up with one deleteRecords of every partition to offset 0 (a no-op on the brokers:
 * the log start offsets are past it), prints "ready", then for every line read from stdin (an offset)
 * deletes every partition's records below that offset with one Admin.deleteRecords call and prints
 * the milliseconds from the call until every partition's future completed, timed inside the JVM.
 * Each call reads the partitions' leaders afresh (the Admin client asks for metadata per call).
 */
public final class DeleteRecordsBench {
    public static void main(String[] args) throws Exception {
        Properties config = new Properties();
        try (FileInputStream in = new FileInputStream(args[1])) {
            config.load(in);
        }
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "120000");
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "120000");
        String topic = args[2];
        int partitions = Integer.parseInt(args[3]);
        try (Admin admin = Admin.create(config)) {
            admin.describeTopics(List.of(topic)).allTopicNames().get();
            delete(admin, topic, partitions, 0);
            System.out.println("ready");
            System.out.flush();
            BufferedReader lines = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                System.out.println(delete(admin, topic, partitions, Long.parseLong(line.trim())));
                System.out.flush();
            }
        }
    }

    /** Milliseconds until every partition's records below {@code offset} are deleted. */
    private static double delete(Admin admin, String topic, int partitions, long offset) throws Exception {
        Map<TopicPartition, RecordsToDelete> records = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            records.put(new TopicPartition(topic, p), RecordsToDelete.beforeOffset(offset));
        }
        long started = System.nanoTime();
        admin.deleteRecords(records, new DeleteRecordsOptions().timeoutMs(60_000)).all().get();
        return (System.nanoTime() - started) / 1e6;
    }
}
