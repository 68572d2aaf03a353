"""Repositories: every query of the service lives here. They flush; the boundary commits."""
