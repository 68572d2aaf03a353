"""Webhooks: admin management (``admin``), the outbox the deletion use cases write events to
(``outbox``), and the deliveries' view and redelivery (``deliveries``)."""
