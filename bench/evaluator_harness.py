#!/usr/bin/env python3
"""Benchmark driver for a Python Spider execution evaluator (bench/oracle.ts runs it as a whole process).

Scores one predictions file against data/spider/dev_gold.sql (`SQL<TAB>db_id` per line) on a database
folder, protocol `official` (the test-suite CLI defaults: plug_value off, keep_distinct off), and
prints `correct N of M`. One of two evaluators does the work:

  --official DIR   the official test-suite evaluator's execution code (taoyds/test-suite-sql-eval,
                   Apache-2.0: DIR holds its exec_eval.py and parse.py, which need sqlparse and tqdm;
                   not part of this repository). Each example goes through its `eval_exec_match`, as
                   its evaluation.py calls it with `--etype exec`, after the same `" value "` -> `" 1 "`
                   replacement. evaluation.py itself is not run: it also parses every gold and
                   predicted query with process_sql.py (for hardness levels), which needs nltk's punkt
                   data; that parsing is extra time the official evaluator spends and this driver
                   does not, so the official timings here are a lower bound.
  --reference      test/fixtures/oracle/reference_check.py, the kit's independent stdlib
                   re-implementation of the same execution path through CPython's sqlite3 (not the
                   official code; it also keeps gold results in memory across examples).

A db_id without its <db>/<db>.sqlite is skipped (NO_DATABASE, as the kit reports it). A prediction
that makes the official code raise (e.g. an empty line: sqlparse finds no statement) counts as wrong.
Usage: evaluator_harness.py (--official DIR | --reference) --pred FILE [--encoding latin-1] [--db-root DIR]
"""
import argparse
import os
import random
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def main():
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--official")
    group.add_argument("--reference", action="store_true")
    parser.add_argument("--pred", required=True)
    parser.add_argument("--encoding", default="utf-8")
    parser.add_argument("--db-root", default=os.path.join(ROOT, "data", "spider", "database"))
    parser.add_argument("--gold", default=os.path.join(ROOT, "data", "spider", "dev_gold.sql"))
    args = parser.parse_args()
    random.seed(0)
    with open(args.gold, encoding="utf-8") as f:
        gold_lines = [line.strip().split("\t") for line in f if line.strip()]
    with open(args.pred, encoding=args.encoding, newline="") as f:
        pred_lines = f.read().split("\n")
    if pred_lines and pred_lines[-1] == "":
        pred_lines.pop()
    if len(pred_lines) != len(gold_lines):
        sys.exit(f"{args.pred}: {len(pred_lines)} predictions for {len(gold_lines)} gold lines")

    if args.official:
        sys.path.insert(0, os.path.abspath(args.official))
        from exec_eval import eval_exec_match  # noqa: E402 - the official code, from DIR

        def score(pred_line, gold_sql, db_id):
            db = os.path.join(args.db_root, db_id, db_id + ".sqlite")
            if not os.path.isfile(db):
                return None
            p_str = pred_line.strip().split("\t")[0].replace(" value ", " 1 ")
            try:
                return eval_exec_match(db=db, p_str=p_str, g_str=gold_sql, plug_value=False, keep_distinct=False, progress_bar_for_each_datapoint=False) == 1
            except Exception:  # noqa: BLE001 - the official CLI would stop; here the example is wrong
                return False
    else:
        sys.path.insert(0, os.path.join(ROOT, "test", "fixtures", "oracle"))
        import reference_check as rc  # noqa: E402

        rc.DB_ROOT = args.db_root
        gold_cache = {}

        def score(pred_line, gold_sql, db_id):
            status = rc.score(pred_line, gold_sql, db_id, "official", gold_cache)
            return None if status == "N" else status == "C"

    verdicts = [score(p, g[0], g[1]) for p, g in zip(pred_lines, gold_lines)]
    scored = [v for v in verdicts if v is not None]
    print(f"correct {sum(scored)} of {len(scored)}")


if __name__ == "__main__":
    main()
