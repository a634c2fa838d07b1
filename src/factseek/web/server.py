"""Start the web app: ``serve(settings, host, port)`` (blocking), or ``LocalServer`` in a thread.

Both warm the pipeline once in the background (build the parts, run one check) so that the
first check a user starts is as fast as every later one.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

from factseek.api import CheckOptions
from factseek.types import Claim
from factseek.web.app import WebSettings, check_options, create_app
from factseek.web.jobs import Runner
from factseek.web.security import is_loopback

WARM_CLAIM = Claim(text="The council approved the budget.")


def warm_in_background(app, settings: WebSettings, claim: Claim | None = None) -> threading.Thread:
    """Build the default parts and run one check in a daemon thread; errors are only logged."""

    def work() -> None:
        try:
            options: CheckOptions = check_options(settings, {})
            app.state.warm_seconds = app.state.runner.warm(options, claim or WARM_CLAIM)
        except Exception as e:  # a broken store shows up again, as one line, on the first check
            app.state.warm_error = f"{type(e).__name__}: {e}"

    t = threading.Thread(target=work, name="warm", daemon=True)
    t.start()
    return t


def exposure_warning(host: str) -> str:
    """The warning printed when the app is bound beyond this machine ('' on loopback)."""
    if is_loopback(host):
        return ""
    return (
        f"warning: serving on {host}: anyone who can reach this address can run checks and read"
        " and change the history; bind to 127.0.0.1 unless you mean it"
    )


def serve(settings: WebSettings, *, host: str, port: int, warm_claim: Claim | None = None) -> None:
    import uvicorn

    app = create_app(settings)
    warm_in_background(app, settings, warm_claim)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """The app served by uvicorn in a thread on a free loopback port (tests, screenshots)."""

    def __init__(
        self, settings: WebSettings, *, port: int | None = None, runner: Runner | None = None
    ) -> None:
        import uvicorn

        self.app = create_app(settings, runner=runner)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, log_level="warning", access_log=False
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)

    def __enter__(self) -> LocalServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.05)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.app.state.runner.close()
