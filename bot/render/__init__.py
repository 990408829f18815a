"""Pure builders of texts and keyboards (unit-tested, no I/O)."""
