# merit-kit — two set-up commands: `make demo` (main job) and `make test` (type-check + test suite).
SHELL := /bin/bash
export NODE_LLAMA_CPP_SKIP_DOWNLOAD := true
export NO_COLOR := 1
MERIT := node lib/bin.mjs
## Node 24.3 or later (package.json engines): the machine's when it is one, else the official linux-x64
## build fetched once (under a lock) from the npm registry into ~/.cache/merit-kit (scripts/node24.sh),
## first on PATH. npm_config_nodedir is always the header folder of that Node (above its bin folder),
## whatever ~/.npmrc says, so `npm ci` builds the add-ons for the Node that runs the kit; a Node
## without headers there leaves it unset (node-gyp then fetches that version's headers).
NODE24_BIN := $(shell scripts/node24.sh)
NODE24_STATUS := $(.SHELLSTATUS)
ifneq ($(NODE24_BIN),)
export PATH := $(NODE24_BIN):$(PATH)
endif
NODE_HEADERS := $(patsubst %/bin,%,$(NODE24_BIN))
ifneq ($(wildcard $(NODE_HEADERS)/include/node/node.h),)
export npm_config_nodedir := $(NODE_HEADERS)
endif
## The pinned TypeScript (package.json); `npx tsc` would find tslab's bundled 5.0 first.
TSC := node node_modules/typescript/bin/tsc

.PHONY: install demo demo-peers demo-full test test-fast typecheck bench bench-model bench-throughput models data-spider data-bird clean notebooks notebooks-full notebooks-paper reproduce preflight llama-server

## No build step: `merit` (lib/bin.mjs) runs lib/'s TypeScript through Node 24's own type stripping.
## scripts/install.sh runs `npm ci` when node_modules is missing, stale, or built for another Node (its
## add-ons do not load with the Node above), and ends by loading each add-on with that Node.
install:
	@[ "$(NODE24_STATUS)" = 0 ] || exit 2
	@scripts/install.sh

## The main job on the bundled data, quick: the tiny test models (meaningless numbers, real mechanics)
## on 16 queries, mostly initially failed ones (configs/demo.json `subset`), every model call replayed
## from the committed results/demo-call-cache.sqlite, so results/demo is rewritten byte for byte on any
## CPU. Quick even when models/ holds the real GGUFs. `node lib/bin.mjs demo --fresh` recomputes.
demo: install
	$(MERIT) demo

## The peers on the same stream (issue "The peers on the same stream" §3, issue 38 §2): merit and the
## nine peer memory methods (PEER_METHODS), the equal-budget control and one long Iterative run (the arm
## iterative_long, K = 15: the token-matched comparison, METHOD.md §13.8) over stream orders 0-2 on 100 of
## the demo's queries (90 initially failed, 10 initially correct) with K = 3 (configs/demo-peers.json),
## on the SIMULATED ENGINE (configs/simulated-engine.json: effects planted, not measured; docs/METHOD.md
## "Simulated engine"), deterministic from (seed, prompt), so nothing is replayed; the report (peers
## table, token-matched and Pareto figures, learning curves, memory diagnostics) in results/demo-peers, byte for byte on any
## machine, then the engine's counts per method. Notebook 09-peers reads it. This one command regenerates it.
demo-peers: install
	$(MERIT) demo --peers

## The demo with the real GGUFs of models/ (`make models`) on 100 queries; prints the plan and an
## estimated time first (hours on a CPU). Runs in runs/demo/qwen, report in results/demo-full.
demo-full: install
	$(MERIT) demo --full

## Type-check, then the vitest suite; the last line is `N passed, N failed`.
test: install
	@mkdir -p .cache
	$(TSC) --noEmit
	@rc=0; npx vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest.json || rc=$$?; \
	  node test/summary.mjs .cache/vitest.json; exit $$rc

## The same without the tests that start real servers, a Slurm cluster or a browser (their files begin
## with a `// SLOW:` line; README "Slow tests"): a developer's loop. CI runs `make test`.
test-fast: install
	@mkdir -p .cache
	$(TSC) --noEmit
	@rc=0; MERIT_TEST_FAST=1 npx vitest run --reporter=default --reporter=json --outputFile.json=.cache/vitest-fast.json || rc=$$?; \
	  node test/summary.mjs .cache/vitest-fast.json; exit $$rc

typecheck: install
	$(TSC) --noEmit

## The paper's full grid, for a GPU machine (or OpenAI-compatible servers set in the configs). Steps,
## on a machine with internet: `make models` (the GGUFs of models/models.json), `make data-spider`
## (Spider dev with every database), `make data-bird` (the BIRD dev databases), then `make reproduce`.
## It first runs `merit preflight`, which stops at the first missing input with one line naming it and
## the command that gets it (exit 2), then prints each grid's plan (`merit grid --plan`: computed LLM
## calls, token bounds). Then both datasets, the methods Tables 1-5 read (PAPER_METHODS), stream
## orders 0-2, and the report in results/paper (with the learning curves, as every report). The controls no table reads (CONTROL_METHODS: the
## non-causal transductive_batch; zeroshot, which makes no LLM call) run with `make reproduce
## CONTROLS=1`. `make reproduce PEERS=1` adds the peer memory methods (PEER_METHODS, METHOD.md §13)
## to both grids, and the report writes the peers table (tables/peers.*: EX, Δ vs MERIT with its
## interval, p, MDE, Holm p, tokens per query, source) and the budget-matched Pareto figure
## (figures/peers-pareto.*); the learning curves then show the peers too. With the peers it also runs
## the equal-budget control (METHOD.md §13): iterative as the arm iterative_budget with K = the
## config's K plus the most extra calls a peer declares per episode (runs/paper/*-budget), a row of
## the peers table and a point of the Pareto figure (the report pairs it under --conditions
## max_repair_steps). And one long Iterative run (the arm iterative_long, K = 15, runs/paper/*-long): the
## report reads it at every K′ ≤ 15 (the shorter runs it holds as prefixes, METHOD.md §13.8) and compares
## each method with Iterative at the K′ whose LLM tokens per query equal its own (the peers table's
## token-matched columns, figures/token-matched.*). Restartable: a rerun resumes unfinished runs and the LLM call cache answers every call
## already made.
PAPER_METHODS := iterative,reflexion,dynamic_rag,merit,merit_typerel,positive_only,no_type_filter,no_dense_rerank,no_bm25,random_same_type,cross_database_only
CONTROL_METHODS := zeroshot,transductive_batch
PEER_METHODS := reasoning_bank,reasoning_bank_oracle,dynamic_cheatsheet,dynamic_cheatsheet_rs,awm,expel_online,exprag,exprecent,error_fix_memory
comma := ,
GRID_METHODS := $(PAPER_METHODS)$(if $(filter 1,$(CONTROLS)),$(comma)$(CONTROL_METHODS),)$(if $(filter 1,$(PEERS)),$(comma)$(PEER_METHODS),)
BUDGET_ARM := iterative_budget
PEER_REPORT := $(if $(filter 1,$(PEERS)),--peers $(PEER_METHODS)$(comma)$(BUDGET_ARM) --conditions max_repair_steps,)
## the equal-budget control's grid on DATASET (spider, bird) with FLAGS (--plan, --resume); empty without PEERS=1
budget_grid = $(if $(filter 1,$(PEERS)),$(MERIT) grid --config configs/$(1).json --methods iterative --arm $(BUDGET_ARM) --max-repair-steps budget:$(PEER_METHODS) --seeds 0$(comma)1$(comma)2 --out runs/paper/$(1)-budget $(2),@true)
## the long Iterative run (the token-matched comparison) on DATASET with FLAGS; empty without PEERS=1
LONG_ARM := iterative_long
LONG_K := 15
long_grid = $(if $(filter 1,$(PEERS)),$(MERIT) grid --config configs/$(1).json --methods iterative --arm $(LONG_ARM) --max-repair-steps $(LONG_K) --seeds 0$(comma)1$(comma)2 --out runs/paper/$(1)-long $(2),@true)
REPORT_RUNS := runs/paper/spider,runs/paper/bird$(if $(filter 1,$(PEERS)),$(comma)runs/paper/spider-budget$(comma)runs/paper/bird-budget$(comma)runs/paper/spider-long$(comma)runs/paper/bird-long,)
ABLATIONS := positive_only,no_type_filter,no_dense_rerank,no_bm25,random_same_type,cross_database_only
reproduce: install
	@$(MERIT) preflight --config configs/spider.json,configs/bird.json
	$(MERIT) initial --config configs/spider.json
	$(MERIT) initial --config configs/bird.json
	$(MERIT) grid --config configs/spider.json --methods $(GRID_METHODS) --seeds 0,1,2 --out runs/paper/spider --plan
	$(MERIT) grid --config configs/bird.json --methods $(GRID_METHODS) --seeds 0,1,2 --out runs/paper/bird --plan
	$(call budget_grid,spider,--plan)
	$(call budget_grid,bird,--plan)
	$(call long_grid,spider,--plan)
	$(call long_grid,bird,--plan)
	$(MERIT) grid --config configs/spider.json --methods $(GRID_METHODS) --seeds 0,1,2 --out runs/paper/spider --resume
	$(MERIT) grid --config configs/bird.json --methods $(GRID_METHODS) --seeds 0,1,2 --out runs/paper/bird --resume
	$(call budget_grid,spider,--resume)
	$(call budget_grid,bird,--resume)
	$(call long_grid,spider,--resume)
	$(call long_grid,bird,--resume)
	$(MERIT) report --runs $(REPORT_RUNS) --out results/paper --costs --reference merit --full merit --ablations $(ABLATIONS) $(PEER_REPORT) --html --paper-numbers $(if $(wildcard results/annotations/cases.csv),--gold-labels results/annotations/cases.csv,)

## Executes every notebook headlessly with Debian's jupyter (after `make demo` and `make demo-peers`); last line `N passed, N failed`.
notebooks: install
	/usr/bin/python3 notebooks/run.py

## The same notebooks on `make demo-full`'s runs (runs/demo/qwen, results/demo-full, the real models in 06 and 08).
notebooks-full: install
	MERIT_DEMO=full MERIT_RESULTS=results/demo-full /usr/bin/python3 notebooks/run.py

## Only the input check of `make reproduce` (models, databases).
preflight: install
	$(MERIT) preflight --config configs/spider.json,configs/bird.json

## The same notebooks on the Spider paper grid of `make reproduce` (and `make demo`, which 02, 05 and 07
## also read); set MERIT_RUNS / MERIT_RESULTS yourself for another grid.
notebooks-paper: install
	MERIT_RUNS=runs/paper/spider MERIT_RESULTS=results/paper /usr/bin/python3 notebooks/run.py

## llama-server + llama-batched-bench built from the llama.cpp release node-llama-cpp bundles, into
## ${XDG_CACHE_HOME:-~/.cache}/merit-kit/llama.cpp-<tag>-<cpu-VARIANT|cuda>/ (reused when built; ~10 min on
## 2 cores; MERIT_LLAMA_GPU=cpu|cuda overrides the choice). The last line is the llama-server path.
llama-server: install
	@scripts/build-llama-server.sh

bench: install
	for b in cost oracle retrieval overhead bootstrap bootstrap-first-call startup llm; do node bench/$$b.ts || exit 1; done

# Random-weight GGUF in Qwen2.5-0.5B-Instruct's shape (bench/README.md); SHAPE=7b for the 7B shape.
bench-model: install
	node bench/make-model.ts --shape $(or $(SHAPE),0.5b)

# Throughput of deterministic vs throughput mode (+ llama-server / llama-batched-bench when built).
bench-throughput: bench-model
	node bench/throughput.ts

## The Qwen2.5-7B-Instruct and bge-large GGUFs (models/models.json), on a machine with model-hub access.
models: install
	$(MERIT) models download

## Official archives, on a machine with internet (verified by sha256; see data/downloads.json).
## data-spider: spider_data.zip (wta_1 and the release files) and the test-suite databases the paper scores with.
data-spider: install
	$(MERIT) data download spider
	$(MERIT) data download spider-testsuite

data-bird: install
	$(MERIT) data download bird

clean:
	rm -rf .cache runs
