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
