"""Search-only answers (no model) on the shared corpus: does the quote a person reads hold the fact?

    .venv/bin/python benchmarks/quote_facts.py            # evals/quote_facts.jsonl, evals/unanswerable.jsonl
    .venv/bin/python benchmarks/quote_facts.py --show     # print each question's answer that misses its fact

evals/quote_facts.jsonl gives, for each question of ground_truth.jsonl, the key number or phrase of its truth as
the documents word it (`"facts": [...]`, any one will do; each was checked against the cited page or its
neighbour). The answer is Folio's search-only turn, as `folio ask` without a model gives it. Reported:
- answered: the share of questions not told "the documents do not answer";
- fact in first quote / in any quote: the share whose first quoted passage (all quoted passages) holds a fact,
  compared on letters and digits only, from a word's start ("$1,500" matches "1 500");
- unanswerable refused: the share of evals/unanswerable.jsonl told "the documents do not answer".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.agent import AgentOptions, run_turn  # noqa: E402
from bot.ingest import IndexOptions, index_files  # noqa: E402
from bot.models import Conversation, Scope  # noqa: E402
from bot.retrieval.local import LocalRetriever  # noqa: E402

_WORD = re.compile(r"[^\W_]+")


def normal(text: str) -> str:
    """Lower-case letters and digits, one space between: quotes and facts compare on words only."""
    return " ".join(_WORD.findall(text.lower()))


def quotes(answer_text: str) -> list[str]:
    """The quoted passages of a search-only answer, in order (each between “ and ”)."""
    return re.findall(r"“(.*?)”", answer_text, flags=re.S)


def holds(text: str, facts: list[str]) -> bool:
    """Whether `text` holds one of `facts`, from a word's start ("cochlear implant" is in "cochlear implants")."""
    padded = f" {normal(text)}"
    return any(f" {normal(fact)}" in padded for fact in facts)


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def measure(args: argparse.Namespace) -> None:
    facts = load(args.facts)
    unanswerable = [item["question"] for item in load(args.unanswerable)]
    options = AgentOptions(model_fast="none", model_thorough="none")
    scope = Scope(container="benefits")
    with tempfile.TemporaryDirectory() as folder:
        retriever = LocalRetriever(Path(folder) / "index.sqlite")
        await index_files(sorted(args.corpus.glob("*.pdf")), retriever, IndexOptions(container="benefits"))
        answered = first = anywhere = 0
        for item in facts:
            answer = await run_turn(
                item["question"], Conversation(scope=scope), model=None, retriever=retriever, options=options
            )
            shown = quotes(answer.text)
            answered += answer.answerable
            first += bool(shown) and holds(shown[0], item["facts"])
            found = any(holds(quote, item["facts"]) for quote in shown)
            anywhere += found
            if args.show and not found:
                print(f"- {item['question']}\n  facts {item['facts']}\n  {answer.text[:600]}\n")
        refused = 0
        for question in unanswerable:
            answer = await run_turn(
                question, Conversation(scope=scope), model=None, retriever=retriever, options=options
            )
            refused += not answer.answerable
        await retriever.close()
    total = len(facts)
    print(
        f"{total} questions: answered {answered / total:.2f}  fact in first quote {first / total:.2f}  "
        f"fact in any quote {anywhere / total:.2f}"
    )
    print(f"{len(unanswerable)} unanswerable questions: refused {refused / max(len(unanswerable), 1):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--facts", type=Path, default=ROOT / "evals" / "quote_facts.jsonl")
    parser.add_argument("--unanswerable", type=Path, default=ROOT / "evals" / "unanswerable.jsonl")
    parser.add_argument("--show", action="store_true", help="print the answers that miss their fact")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
