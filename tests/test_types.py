import datetime as dt

from factseek.types import (
    Claim,
    ConstraintDecision,
    Hit,
    Query,
    QueryResult,
    Report,
    Summary,
    SummarySentence,
    Verdict,
    from_json,
    to_json,
)


def test_report_round_trips_through_json():
    claim = Claim(text="The bridge cost 3 million.", date=dt.date(2024, 5, 1), speaker="Mayor X")
    hit = Hit(url="https://a.example/x", published=dt.date(2024, 1, 2), rank=1, query="bridge cost")
    report = Report(
        claim=claim,
        results=(
            QueryResult(
                query=Query(text="bridge cost", question="Did the bridge cost 3 million?"),
                hits=(hit,),
                decisions=(ConstraintDecision(url=hit.url, kept=True, reason="ok"),),
                native=("date",),
            ),
        ),
        summaries=(
            Summary(
                url=hit.url,
                text="It cost 3 million.",
                relevant=True,
                method="extractive",
                sentences=(SummarySentence(text="It cost 3 million.", start_char=0, end_char=18),),
            ),
        ),
        verdict=Verdict.not_judged(),
        removed={"after-claim-date": 2},
        timings={"search": 0.5},
    )
    again = from_json(Report, to_json(report))
    assert again == report
    assert again.claim.date == dt.date(2024, 5, 1)
    assert isinstance(again.results[0].hits, tuple)


def test_not_judged_has_no_label():
    v = Verdict.not_judged()
    assert v.judged is False and v.label is None


def test_evidence_answers_and_verdict_round_trip():
    from factseek.types import Answer, Evidence, StanceResult

    stance = StanceResult(
        label="refutes", probs={"supports": 0.1, "refutes": 0.8, "nei": 0.1}, model="m"
    )
    ev = Evidence(
        id="E1",
        url="https://a.example/x",
        text="The budget grew 18 percent.",
        start_char=10,
        end_char=37,
        question="Did the budget grow 40 percent?",
        published=dt.date(2023, 1, 2),
        stance=stance,
    )
    report = Report(
        claim=Claim(text="The budget grew 40 percent."),
        evidence=(ev,),
        answers=(Answer(question=ev.question, answer="no", confidence=0.8, evidence_ids=("E1",)),),
        verdict=Verdict(
            judged=True,
            label="refuted",
            scale="averitec",
            confidence=0.8,
            rationale="E1 refutes it.",
            evidence_ids=("E1",),
        ),
    )
    again = from_json(Report, to_json(report))
    assert again == report
    assert again.evidence[0].stance is not None and again.evidence[0].stance.confidence == 0.8
    assert again.answers[0].evidence_ids == ("E1",)


def test_function_stance_normalises_probabilities():
    from factseek.stance import FunctionStance

    s = FunctionStance(lambda q, e: {"supports": 2.0, "refutes": 1.0, "nei": 1.0})
    (r,) = s.classify([("q", "e")])
    assert r.label == "supports" and abs(sum(r.probs.values()) - 1) < 1e-9
    assert r.probs["supports"] == 0.5
