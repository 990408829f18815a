"""One module per feature; each exposes ``register(app)``."""
