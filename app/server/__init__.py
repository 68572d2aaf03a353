"""The process model: migrating before start, binding the socket, forking HTTP workers that share it,
the workers-only mode, and the uvicorn protocol every HTTP worker speaks."""
