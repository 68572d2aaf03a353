"""The ``kafka-purge`` command: the parser (``main``); the service's own commands (``service``); the client
commands over the HTTP API (``deletions``, ``acls``, ``policies``, ``audit``) with their connection
(``client``), input formats (``input``), confirmation (``preview``, ``prompt``), output and exit codes."""
