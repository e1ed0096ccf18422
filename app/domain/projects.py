"""Project identity rules shared by the HTTP layer, authentication and services."""

DEFAULT_PROJECT = "default"
PROJECT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
