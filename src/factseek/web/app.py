"""The FastAPI app: check, review, correct and rerun, history, exports (server-rendered pages).

Every page is a Jinja2 template (autoescaped); JavaScript is one static file that only streams
progress and asks before deleting: every action is a plain form POST (CSRF-checked) answered by
a redirect, so the app works without scripts too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from factseek.api import CheckOptions, check_config, make_claim
from factseek.constraints.temporal import DATE_BASES
from factseek.errors import FactseekError, InputError
from factseek.pipeline import CheckConfig, validate_claim
from factseek.report import filter_words, reason_words, render, stage_words
from factseek.review.apply import carry_forward, listing, review_state, reviewed
from factseek.review.claimreview import automated_verdict, claim_review, dumps, refusal
from factseek.review.feedback import FeedbackLog, clean_user, decision, is_anonymous
from factseek.review.history import History, RunRecord
from factseek.review.ratings import DEFAULT_RATINGS, RatingScale, label_words
from factseek.sanitize import safe_url
from factseek.search.base import BACKENDS
from factseek.stance import engine_for_many
from factseek.types import STANCE_LABELS, Question, Report
from factseek.web import security
from factseek.web.jobs import STAGES, Runner
from factseek.web.security import wants_json
from factseek.web.views import review, tone

HERE = Path(__file__).parent
USER_COOKIE = "factseek_user"
MAX_BODY = 256 * 1024  # bytes a form may send
WAIT_S = 1.0  # the progress stream's longest wait between two looks at a check
MAX_PAGE_NO = 10**9  # history pages (offsets stay far inside SQLite's int64)
STANCE_WORDS = {"supports": "Supports", "refutes": "Refutes", "nei": "Takes no side"}
MAX_QUESTIONS = 12
MAX_QUESTION_CHARS = 500
CHOICES = {
    "decomposer": ("auto", "rules", "llm"),
    "summarizer": ("auto", "extractive", "llm-zero-shot", "llm-few-shot"),
    "llm": ("none", "openai", "llamacpp"),
}
SETTINGS = ("date_basis", "keep_pdf")  # form fields that choose pipeline settings


def json_error(status: int, reason: str) -> Response:
    """A JSON client's error: the status and one line saying why (``security.error_json``)."""
    return Response(
        security.error_json(status, reason), status_code=status, media_type="application/json"
    )


def cookie_name(user: str) -> str:
    """A reviewer name as a cookie value: the cleaned name percent-encoded as UTF-8 (ASCII
    only, whatever script the name is in; ``user_name`` reads it back)."""
    return quote(clean_user(user), safe="")


def user_name(cookie: str | None) -> str:
    """The reviewer name a cookie holds ("" when none), cleaned as every name is."""
    return clean_user(unquote(cookie)) if cookie else ""


@dataclass(frozen=True, kw_only=True)
class WebSettings:
    """What ``factseek serve`` was started with (paths and names; never keys)."""

    db: Path
    store: Path | None = None  # None: no local store (web search only)
    store_label: str = ""
    user: str = "anonymous"
    organisation: str = ""  # ClaimReview author when set
    ratings: RatingScale = DEFAULT_RATINGS  # the organisation's rating scale (serve --ratings)
    judge: Path | None = None
    rewrite: Path | None = None
    llm_model: str | None = None
    llm_base_url: str | None = None
    cache_dir: Path | None = None
    workers: int = 2
    stance: str = "default"  # the stance model every check reads with (serve --stance)
    cascade: bool = False  # small screens the pairs mpnet reads (serve --cascade)
    hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1", "[::1]")
    extra: dict[str, Any] = field(default_factory=dict)


def search_choices(settings: WebSettings) -> list[str]:
    names = sorted(n for n in BACKENDS if n != "local")
    return (["local"] if settings.store is not None else []) + names


def check_options(settings: WebSettings, chosen: dict[str, Any]) -> CheckOptions:
    """CheckOptions from a form's choices; every name is checked against the allowed ones."""
    search = str(chosen.get("search") or search_choices(settings)[0])
    if search not in search_choices(settings):
        raise InputError(
            f"unknown search {search!r}; choose one of: {', '.join(search_choices(settings))}"
        )
    picked = {}
    for name, allowed in CHOICES.items():
        value = str(chosen.get(name) or allowed[0])
        if value not in allowed:
            raise InputError(f"unknown {name} {value!r}; choose one of: {', '.join(allowed)}")
        picked[name] = value
    return CheckOptions(
        store=settings.store if search == "local" else None,
        search=search,
        decomposer=picked["decomposer"],
        summarizer=picked["summarizer"],
        llm=picked["llm"],
        llm_model=settings.llm_model,
        llm_base_url=settings.llm_base_url,
        judge=settings.judge if chosen.get("judge") and settings.judge else None,
        rewrite=settings.rewrite if chosen.get("rewrite") and settings.rewrite else None,
        cache_dir=settings.cache_dir,
        keep_pdf=bool(chosen.get("keep_pdf")),
        stance=settings.stance,
        cascade=settings.cascade,
        stance_engine=engine_for_many(),  # a server reads many pairs: torch's kernels
    )


def check_settings(chosen: dict[str, Any]) -> CheckConfig:
    """The pipeline settings a form chooses: the date basis and whether PDFs are kept."""
    basis = str(chosen.get("date_basis") or DATE_BASES[0])
    if basis not in DATE_BASES:
        raise InputError(f"unknown date basis {basis!r}; choose one of: {', '.join(DATE_BASES)}")
    return check_config(date_basis=basis, keep_pdf=bool(chosen.get("keep_pdf")))


def create_app(settings: WebSettings, *, runner: Runner | None = None) -> FastAPI:
    history = History(settings.db)
    feedback = FeedbackLog(settings.db, ratings=settings.ratings)
    runner = runner or Runner(history, workers=settings.workers)
    app = FastAPI(title="factseek", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.settings, app.state.history, app.state.runner = settings, history, runner
    app.state.feedback = feedback
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["link"] = safe_url
    templates.env.filters["pct"] = lambda x: "" if x is None else f"{100 * float(x):.0f}%"
    templates.env.filters["reason_words"] = reason_words  # plain words, as in the reports
    templates.env.filters["stage_words"] = stage_words
    templates.env.globals["filter_words"] = filter_words
    templates.env.globals.update(
        stance_labels=STANCE_LABELS,
        stance_words=STANCE_WORDS,
        label_words=label_words,
        tone=lambda label, scale="": tone(label, scale, settings.ratings),
        ratings=settings.ratings,
        stages=STAGES,
        choices=CHOICES,
        date_bases=DATE_BASES,
    )
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        token = request.cookies.get(security.CSRF_COOKIE)
        request.state.csrf = token or security.new_token()
        response: Response = await call_next(request)
        if not token:
            response.set_cookie(
                security.CSRF_COOKIE, request.state.csrf, httponly=True, samesite="strict"
            )
        return response

    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(settings.hosts))
    app.add_middleware(security.BodyLimit, limit=MAX_BODY)
    app.add_middleware(security.JsonErrors)  # JSON clients get JSON errors, those above too
    app.add_middleware(security.SecurityHeaders)  # outermost: every response, errors included

    def page(request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        ctx.update(
            csrf=request.state.csrf,
            user=user_of(request),
            settings=settings,
            search_choices=search_choices(settings),
        )
        return templates.TemplateResponse(request, name, ctx, status_code=status)

    async def form_of(request: Request) -> Any:
        """The POSTed form, after the CSRF and origin checks (403 otherwise)."""
        form = await request.form()
        if not security.origin_ok(request.headers.get("origin"), request.headers.get("host")):
            raise HTTPException(403, "cross-site request refused")
        if not security.token_ok(
            request.cookies.get(security.CSRF_COOKIE), str(form.get(security.CSRF_FIELD) or "")
        ):
            raise HTTPException(403, "missing or stale form token: reload the page and retry")
        return form

    def user_of(request: Request) -> str:
        return user_name(request.cookies.get(USER_COOKIE)) or clean_user(settings.user)

    def record(run_id: int) -> RunRecord:
        try:
            return history.get(run_id)
        except InputError as e:
            raise HTTPException(404, str(e)) from None

    def done_record(run_id: int) -> RunRecord:
        rec = record(run_id)
        if rec.report is None:
            raise HTTPException(409, f"check #{run_id} has no report ({rec.status})")
        return rec

    def refresh(run_id: int, report: Report) -> None:
        """Store the run's reviewed state for the history list (after every correction)."""
        state = review_state(report, feedback.for_run(run_id), settings.ratings)
        history.set_review(run_id, listing(state.report))

    def named(request: Request) -> str:
        """The reviewer's name; a verdict decision needs one (InputError otherwise)."""
        user = user_of(request)
        if is_anonymous(user):
            raise InputError("set your reviewer name (top right) before deciding a verdict")
        return user

    def carry(run_id: int, report: Report) -> Report:
        """A finished rerun takes over the corrections of the run it reran where they apply."""
        rec = history.get(run_id)
        if rec.parent_id is None:
            return report
        try:
            parent = history.get(rec.parent_id)
        except InputError:  # deleted meanwhile: nothing to carry
            return report
        if parent.report is None:
            return report
        plan = carry_forward(parent.report, feedback.for_run(parent.id), report, from_run=parent.id)
        for c in plan.carried:
            feedback.add(run_id, c.kind, c.value, user=c.source.user, target=c.target)
        if plan.carried or plan.not_carried:
            feedback.add(run_id, "carry", plan.record(), user=rec.user)
            refresh(run_id, report)
        return report

    runner.on_report = carry

    def error(request: Request, status: int, message: str) -> Response:
        """An error as the client asked: JSON for a JSON client, else the error page."""
        if wants_json(request.url.path, request.headers.get("accept", "")):
            return json_error(status, message)
        if not hasattr(request.state, "csrf"):
            return PlainTextResponse(message, status_code=status)
        return page(request, "error.html", status=status, message=message)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return error(request, exc.status_code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        first = next(iter(exc.errors()), {})
        where = str((first.get("loc") or ("request",))[-1]).replace("_", " ")
        return error(request, 422, f"{where}: {str(first.get('msg', 'invalid')).lower()}")

    @app.exception_handler(FactseekError)
    async def factseek_error(request: Request, exc: FactseekError) -> Response:
        return error(request, 400 if exc.exit_code == 2 else 500, str(exc))

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Response:
        return page(request, "index.html", recent=history.list(limit=8), form={}, error="")

    @app.post("/check")
    async def check(request: Request) -> Response:
        form = await form_of(request)
        fields = {k: str(form.get(k) or "").strip() for k in ("claim", "date", "speaker", "venue")}
        chosen = {k: form.get(k) for k in ("search", "judge", "rewrite", *CHOICES, *SETTINGS)}
        try:
            claim = validate_claim(
                make_claim(
                    fields["claim"],
                    date=fields["date"] or None,
                    speaker=fields["speaker"],
                    venue=fields["venue"],
                )
            )
            options = check_options(settings, chosen)
            config = check_settings(chosen)
        except InputError as e:
            recent = history.list(limit=8)
            return page(request, "index.html", 400, recent=recent, form=fields, error=str(e))
        run_id = runner.submit(
            claim, options, config=config, user=user_of(request), shown_options=_shown(chosen)
        )
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    async def run_page(request: Request, run_id: int) -> Response:
        rec = record(run_id)
        if rec.status == "running":
            return page(request, "progress.html", rec=rec, job=runner.job(run_id))
        if rec.report is None:
            return page(request, "failed.html", rec=rec)
        corrections = feedback.for_run(run_id)
        return page(
            request,
            "review.html",
            rec=rec,
            report=rec.report,
            view=review(rec.report, corrections, settings.ratings),
            reruns=[r for r in history.list(limit=20) if r.parent_id == run_id],
        )

    def state(run_id: int) -> tuple[str, str]:
        try:
            return history.state(run_id)
        except InputError as e:
            raise HTTPException(404, str(e)) from None

    @app.get("/runs/{run_id}/status")
    async def status(run_id: int) -> Response:
        st, error = state(run_id)  # no report parsed: pages poll this
        job = runner.job(run_id)
        return JSONResponse(
            {
                "id": run_id,
                "status": st,
                "stages": job.stages if job else [],
                "error": error,
                "url": f"/runs/{run_id}",
            }
        )

    @app.get("/runs/{run_id}/events")
    async def events(request: Request, run_id: int) -> Response:
        state(run_id)

        async def stream() -> Any:
            loop = asyncio.get_running_loop()
            changed = asyncio.Event()

            def poke() -> None:  # called from a worker thread
                loop.call_soon_threadsafe(changed.set)

            runner.listen(poke)
            try:
                sent = 0
                deadline = time.monotonic() + 600
                while time.monotonic() < deadline:
                    changed.clear()  # before reading: a change from now on wakes the wait below
                    job = runner.job(run_id)
                    stages = job.stages if job else []
                    for stage in stages[sent:]:
                        yield f"event: stage\ndata: {json.dumps(stage)}\n\n"
                    sent = len(stages)
                    status = job.status if job else state(run_id)[0]
                    if status in ("done", "failed"):
                        yield f"event: {status}\ndata: {json.dumps(f'/runs/{run_id}')}\n\n"
                        return
                    if await request.is_disconnected():
                        return
                    with contextlib.suppress(TimeoutError):  # woken by the next stage or the end
                        await asyncio.wait_for(changed.wait(), WAIT_S)
            finally:
                runner.unlisten(poke)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
        )

    @app.post("/runs/{run_id}/questions")
    async def edit_questions(request: Request, run_id: int) -> Response:
        form = await form_of(request)
        rec = done_record(run_id)
        assert rec.report is not None
        before = {q.text: q for q in rec.report.questions}
        texts = [" ".join(str(t).split()) for t in form.getlist("q")]
        texts = [t[:MAX_QUESTION_CHARS] for t in texts if t][:MAX_QUESTIONS]
        if not texts:
            raise InputError("give at least one question to search")
        questions = [before.get(t) or Question(text=t, source="user", kind="user") for t in texts]
        options = check_options(settings, dict(rec.options))
        new_id = runner.submit(
            rec.claim,
            options,
            config=check_settings(dict(rec.options)),
            user=user_of(request),
            shown_options=dict(rec.options),
            parent_id=run_id,
            questions=questions,
        )
        feedback.add(
            run_id,
            "questions",
            {"before": list(before), "after": texts, "rerun_id": new_id},
            user=user_of(request),
        )
        return RedirectResponse(f"/runs/{new_id}", status_code=303)

    @app.post("/runs/{run_id}/cards/{card_id}")
    async def correct_card(request: Request, run_id: int, card_id: str) -> Response:
        form = await form_of(request)
        rec = done_record(run_id)
        assert rec.report is not None
        from factseek.review.apply import cards

        if card_id not in {c.id for c in cards(rec.report)}:
            raise HTTPException(404, f"no evidence card {card_id!r} in check #{run_id}")
        action = str(form.get("action") or "")
        if action in ("relevant", "irrelevant"):
            feedback.add(
                run_id,
                "relevance",
                {"relevant": action == "relevant"},
                user=user_of(request),
                target=card_id,
            )
        elif action == "stance":
            feedback.add(
                run_id,
                "stance",
                {"label": form.get("label")},
                user=user_of(request),
                target=card_id,
            )
        else:
            raise InputError("unknown card action; choose relevant, irrelevant or stance")
        refresh(run_id, rec.report)
        return RedirectResponse(f"/runs/{run_id}#card-{card_id}", status_code=303)

    @app.post("/runs/{run_id}/verdict")
    async def override_verdict(request: Request, run_id: int) -> Response:
        form = await form_of(request)
        rec = done_record(run_id)
        assert rec.report is not None
        scale, _, label = str(form.get("label") or "").partition(":")
        feedback.add(
            run_id,
            "verdict",
            {"scale": scale, "label": label, "note": form.get("note") or ""},
            user=named(request),
        )
        refresh(run_id, rec.report)
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    @app.post("/runs/{run_id}/approve")
    async def approve_verdict(request: Request, run_id: int) -> Response:
        """The reviewer approves the machine's verdict as it stands after their corrections.

        Over a verdict a reviewer set, only with ``replace`` ticked (409 otherwise): a stale
        page's approve button never replaces a reviewer's label by itself."""
        form = await form_of(request)
        rec = done_record(run_id)
        assert rec.report is not None
        corrections = feedback.for_run(run_id)
        now = review_state(rec.report, corrections, settings.ratings).machine_now
        d = decision(corrections)
        if d is not None and d.kind == "verdict" and not form.get("replace"):
            raise HTTPException(
                409,
                f"{d.user} set the verdict to {label_words(d.value['label'])} on"
                f" {d.created[:16].replace('T', ' ')} UTC: to replace it with the machine's,"
                " tick “replace” and approve again",
            )
        if not now.judged:
            raise InputError("nothing to approve: the pipeline gave no verdict; set one instead")
        if settings.ratings.for_machine(now.scale, now.label or "") is None:
            raise InputError(
                f"the rating scale {settings.ratings.name} has no label for {now.label}:"
                " set the verdict instead"
            )
        feedback.add(
            run_id,
            "approve",
            {"label": now.label, "scale": now.scale, "judge": now.judge, "note": form.get("note")},
            user=named(request),
        )
        refresh(run_id, rec.report)
        return RedirectResponse(f"/runs/{run_id}", status_code=303)

    @app.post("/runs/{run_id}/delete")
    async def delete(request: Request, run_id: int) -> Response:
        await form_of(request)
        if not history.delete(run_id):
            raise HTTPException(404, f"no check #{run_id} in the history")
        return RedirectResponse("/history", status_code=303)

    @app.get("/runs/{run_id}/export.{fmt}")
    async def export(run_id: int, fmt: str, inline: bool = False) -> Response:
        if fmt not in ("json", "md", "html"):
            raise HTTPException(404, "export as json, md, html or claimreview.jsonld")
        rec = done_record(run_id)
        assert rec.report is not None
        text = render(reviewed(rec.report, feedback.for_run(run_id), settings.ratings), fmt)
        media = {"json": "application/json", "md": "text/markdown", "html": "text/html"}[fmt]
        headers = {"Content-Security-Policy": security.REPORT_CSP}
        if not inline:
            headers["Content-Disposition"] = f'attachment; filename="factseek-{run_id}.{fmt}"'
        return Response(text, media_type=f"{media}; charset=utf-8", headers=headers)

    @app.get("/runs/{run_id}/claimreview.jsonld")
    async def claimreview(request: Request, run_id: int, url: str = "", org: str = "") -> Response:
        rec = done_record(run_id)
        assert rec.report is not None
        report = reviewed(rec.report, feedback.for_run(run_id), settings.ratings)
        why = refusal(report.review)
        if why:  # only a reviewed verdict is published
            raise HTTPException(409, f"no ClaimReview for check #{run_id}: {why}")
        org = " ".join(org.split())[:200] or settings.organisation
        data = claim_review(report, organisation=org, url=url.strip())
        return Response(
            dumps(data, indent=2),  # safe inside <script type="application/ld+json">
            media_type="application/ld+json",
            headers={"Content-Disposition": f'inline; filename="claimreview-{run_id}.jsonld"'},
        )

    @app.get("/runs/{run_id}/automated-verdict.json")
    async def automated(run_id: int) -> Response:
        """The pipeline's verdict as it ran, marked automated (for research, never published)."""
        rec = done_record(run_id)
        assert rec.report is not None
        return JSONResponse(
            automated_verdict(rec.report),
            headers={"Content-Disposition": f'inline; filename="automated-verdict-{run_id}.json"'},
        )

    @app.get("/history", response_class=HTMLResponse)
    async def history_page(request: Request, q: str = "", page_no: int = 0) -> Response:
        if not 0 <= page_no <= MAX_PAGE_NO:
            raise HTTPException(400, f"page_no must be between 0 and {MAX_PAGE_NO}")
        rows = history.list(q, limit=50, offset=50 * page_no)
        return page(request, "history.html", rows=rows, q=q, page_no=page_no)

    @app.post("/user")
    async def set_user(request: Request) -> Response:
        form = await form_of(request)
        target = str(form.get("next") or "/")
        if not target.startswith("/") or target.startswith("//") or "\\" in target:
            target = "/"  # never redirect off this site
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            USER_COOKIE, cookie_name(str(form.get("user") or "")), httponly=True, samesite="strict"
        )
        return response

    return app


def _shown(chosen: dict[str, Any]) -> dict[str, Any]:
    """The form's choices as stored with a run (names only)."""
    return {k: str(v) for k, v in chosen.items() if v not in (None, "")}
