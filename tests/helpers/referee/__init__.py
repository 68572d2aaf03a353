"""The differential referee: scenarios written once (tests/real_kafka/referee/scenarios.yaml), played on
the Kafka emulator and on the real cluster through real clients, every observable answer compared."""
