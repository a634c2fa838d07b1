"""The fact-checker's workbench, ``factseek serve``: a local web app to check, review, correct,
rerun and export (FastAPI, server-rendered Jinja2 templates, one small static script).

Needs the ``web`` extra (``pip install "factseek[web]"``); nothing here is imported by
``import factseek``. ``factseek.web.server`` starts it; ``factseek.web.app.create_app`` builds it.
"""

from __future__ import annotations

INSTALL_HINT = 'the web app needs the "web" extra: pip install "factseek[web]"'


def require_web() -> None:
    """ConfigError with the install hint when the web extra is missing."""
    from factseek.errors import ConfigError

    try:
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401
        import multipart  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise ConfigError(f"{INSTALL_HINT} ({e.name} is missing)") from None
