"""The use cases, called alike by the routers, the worker, the scheduler and the CLI."""
