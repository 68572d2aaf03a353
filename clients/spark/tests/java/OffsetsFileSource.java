package kafkapurge.test;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Test-only streaming source whose offsets are shaped exactly like Spark's Kafka source
 * ({"topic":{"0":100}}: the next offset per partition), because the spark-sql-kafka connector cannot
 * be installed here and PySpark 3.5 has no Python data source API. The option "offsets" names a file
 * holding the latest end offsets; the test rewrites it to make data "arrive". Each offset in
 * [start, end) of a partition becomes one row (topic, partition, offset).
 */
public final class OffsetsFileSource implements TableProvider {
    static final StructType SCHEMA = new StructType()
            .add("topic", DataTypes.StringType)
            .add("partition", DataTypes.IntegerType)
            .add("offset", DataTypes.LongType);
    static final ObjectMapper JSON = new ObjectMapper();
    static final TypeReference<TreeMap<String, TreeMap<String, Long>>> SHAPE = new TypeReference<>() {};

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return SCHEMA;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new OffsetsTable(properties.get("offsets"));
    }

    static TreeMap<String, TreeMap<String, Long>> parse(String json) {
        try {
            return JSON.readValue(json, SHAPE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static final class KafkaShapedOffset extends Offset {
        final String json;

        KafkaShapedOffset(TreeMap<String, TreeMap<String, Long>> offsets) {
            try {
                this.json = JSON.writeValueAsString(offsets);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public String json() {
            return json;
        }
    }

    static final class OffsetsTable implements Table, SupportsRead {
        final String file;

        OffsetsTable(String file) {
            this.file = file;
        }

        @Override
        public String name() {
            return "offsets-file";
        }

        @Override
        public StructType schema() {
            return SCHEMA;
        }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.MICRO_BATCH_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
            return () -> new OffsetsScan(file);
        }
    }

    static final class OffsetsScan implements Scan {
        final String file;

        OffsetsScan(String file) {
            this.file = file;
        }

        @Override
        public StructType readSchema() {
            return SCHEMA;
        }

        @Override
        public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
            return new OffsetsStream(file);
        }
    }

    static final class OffsetsStream implements MicroBatchStream {
        final String file;

        OffsetsStream(String file) {
            this.file = file;
        }

        TreeMap<String, TreeMap<String, Long>> current() {
            try {
                return parse(Files.readString(Path.of(file)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public Offset initialOffset() {
            TreeMap<String, TreeMap<String, Long>> zeros = current();
            zeros.values().forEach(partitions -> partitions.replaceAll((p, o) -> 0L));
            return new KafkaShapedOffset(zeros);
        }

        @Override
        public Offset latestOffset() {
            return new KafkaShapedOffset(current());
        }

        @Override
        public Offset deserializeOffset(String json) {
            return new KafkaShapedOffset(parse(json));
        }

        @Override
        public InputPartition[] planInputPartitions(Offset start, Offset end) {
            TreeMap<String, TreeMap<String, Long>> from = parse(start.json());
            List<InputPartition> ranges = new ArrayList<>();
            parse(end.json()).forEach((topic, partitions) -> partitions.forEach((partition, stop) -> {
                long begin = from.getOrDefault(topic, new TreeMap<>()).getOrDefault(partition, 0L);
                if (begin < stop) {
                    ranges.add(new Range(topic, Integer.parseInt(partition), begin, stop));
                }
            }));
            return ranges.toArray(new InputPartition[0]);
        }

        @Override
        public PartitionReaderFactory createReaderFactory() {
            return new RangeReaderFactory();
        }

        @Override
        public void commit(Offset end) {}

        @Override
        public void stop() {}
    }

    static final class Range implements InputPartition {
        final String topic;
        final int partition;
        final long start;
        final long end;

        Range(String topic, int partition, long start, long end) {
            this.topic = topic;
            this.partition = partition;
            this.start = start;
            this.end = end;
        }
    }

    static final class RangeReaderFactory implements PartitionReaderFactory {
        @Override
        public PartitionReader<InternalRow> createReader(InputPartition input) {
            Range range = (Range) input;
            return new PartitionReader<>() {
                long next = range.start - 1;

                @Override
                public boolean next() {
                    next += 1;
                    return next < range.end;
                }

                @Override
                public InternalRow get() {
                    return new GenericInternalRow(
                            new Object[] {UTF8String.fromString(range.topic), range.partition, next});
                }

                @Override
                public void close() {}
            };
        }
    }
}
