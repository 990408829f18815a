"""A local stand-in for Telegram: the fake Bot API server (`sandbox.fakeapi`), used by the
tests, the load benchmark and the sandbox that lets anyone try the bot without a token."""
