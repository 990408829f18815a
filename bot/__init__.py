"""Telegram bot for Briscola chiamata (python-telegram-bot 22)."""
