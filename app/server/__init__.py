"""The process model: migrating before start, binding the socket, forking HTTP workers that share it,
and the workers-only mode."""
