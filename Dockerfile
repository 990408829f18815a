# The bot as a container: `docker compose up -d` (compose.yaml) or
#   docker build -t briscola-chiamata . && docker run -d --env-file .env -v briscola-data:/data briscola-chiamata
# The SQLite database lives on the /data volume; settings come from the environment
# (.env.example lists them). scripts/container-check builds and tries it against the fake
# Bot API.

# -- build: the wheel (the translations travel inside it) ---------------------------------
FROM python:3.11-slim AS build
# a C compiler (and Python's headers, where the image lacks them) for the computer
# players' compiled hot loop (setup.py: mypyc); without them the wheel is pure Python and
# plays the same moves, more slowly
RUN (apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev \
     && { python3 -c "import os, sys, sysconfig; \
          sys.exit(not os.path.exists(sysconfig.get_paths()['include'] + '/Python.h'))" \
          || apt-get install -y -qq --no-install-recommends python3-dev; } \
     && rm -rf /var/lib/apt/lists/*) || echo "no C compiler: a pure-Python wheel"
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY locales locales
COPY bot bot
COPY game game
COPY storage storage
COPY sandbox sandbox
# (the wheel's name says which: cp311-…-linux_x86_64 compiled, py3-none-any pure)
RUN pip wheel --no-cache-dir --wheel-dir /wheels . && ls /wheels/briscola_chiamata-*

# -- run: the installed package, as an unprivileged user ----------------------------------
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATABASE_URL=sqlite:////data/briscola.db \
    HEALTH_FILE=/tmp/briscola-alive \
    WEBHOOK_LISTEN=0.0.0.0
COPY --from=build /wheels /wheels
RUN pip install /wheels/*.whl && rm -rf /wheels \
    && useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin briscola \
    && mkdir -p /data && chown briscola:briscola /data
USER briscola
WORKDIR /data
VOLUME ["/data"]
# only used in webhook mode (WEBHOOK_URL set; a reverse proxy terminates HTTPS)
EXPOSE 8443
# docker stop sends SIGTERM: the bot is gone within 8 s, before Docker's 10 s SIGKILL
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-m", "bot.health"]
CMD ["briscola-bot"]
