"""Pure domain logic shared by the services: no I/O here."""
