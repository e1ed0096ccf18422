"""The queue worker: claims and processes documents, beside the API or as its own process."""
