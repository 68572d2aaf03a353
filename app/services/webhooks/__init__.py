"""Webhooks: admin management (``admin``) and the deliveries' view and redelivery (``deliveries``); the
outbox the deletion use cases write events to is ``app.adapters.db.repositories.webhooks``."""
