"""This service's own Kafka codecs, one module per API, used where aiokafka's protocol does not serve;
each codec's docstring gives the figure or the defect that justifies it.

- ``delete_records``: DeleteRecords v0-v3 (aiokafka lacks v3 and LeaderOnly; per 3,333 partitions the
  hand-packed body takes a tenth of aiokafka's 4-9 ms, the answer ~2 ms to decode against ~9 ms).
- ``list_offsets``: ListOffsets encoded and decoded one topic per ``struct`` call (aiokafka's codec:
  ~10 ms to encode 10,000 entries, ~0.1 s to decode a preview's answers).
- ``topic_metadata``: Metadata v1-v5 answers decoded into the typed view (~10 ms against aiokafka's ~73 ms
  for a 10,000-partition topic).
- ``offset_fetch``: OffsetFetch v1-v3 answers (aiokafka's decoder ~0.17 s per 10,000 partitions) and v8.
- ``describe_groups``: DescribeGroups v3 with the v3 response (aiokafka's names the v2 one).
- ``consumer_protocol``: the subscription and assignment bytes in DescribeGroups, read without raising on
  another protocol's bytes.
- ``wire``: the primitive types the decoders above share.
"""
