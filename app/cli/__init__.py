"""The ``kafka-purge`` command: parsing and dispatch (``main``), the client commands over the HTTP API
(``client``, ``audit``), their input formats (``input``) and text output (``output``)."""
