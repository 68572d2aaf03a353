"""Integrations with the systems around Kafka (Spark). Nothing here is imported by the web app's routes
except the pure-Python parts (the checkpoint reader)."""
