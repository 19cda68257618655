"""SQL storage (SQLAlchemy)."""
