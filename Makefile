# rerankd: the two commands that matter are `make run` and `make test`.
SHELL := /bin/bash
# Go 1.27.3 is the toolchain rerankd is built and tested with: Go 1.26.8 (the machines' own) has
# standard-library vulnerabilities that our code reaches (see `make vulncheck`). The go command
# fetches this toolchain from the module proxy on first use (~76 MB, once per machine).
export GOTOOLCHAIN := go1.27.3
GO ?= go
GOLANGCI_VERSION := v2.15.0
# Everything installed lives in the cache scripts/setup.sh uses, never in a folder a new machine
# may lack ($(go env GOPATH)/bin does not exist until something creates it).
CACHE := $(or $(RERANKD_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rerankd)
# golangci-lint must be built by the same Go as the code it checks, so it lives per toolchain.
LINTDIR := $(CACHE)/tools/golangci-lint/$(GOLANGCI_VERSION)-$(GOTOOLCHAIN)
LINTBIN := $(LINTDIR)/golangci-lint
BIN := bin/rerankd
LAB := bin/rerankd-bench
FUZZTIME ?= 30s
# The LoCoMo dev split lives beside the clone (never in it: CC BY-NC).
RERANKD_LOCOMO ?= $(wildcard $(abspath ../shared/locomo))
export RERANKD_LOCOMO

.PHONY: all setup setup-gpu gpu-check setup-browser setup-mcp setup-clients setup-postgres build run test test-short vet tidy lint fuzz bench bench-encoders loadtest bench-tokenizer golden pytest clean fresh-check

all: build

## setup: install the ONNX Runtime library and Qwen3 tokenizer into the cache (idempotent, checksummed)
setup:
	scripts/setup.sh

## setup-gpu: the CUDA build of ONNX Runtime 1.29.0 (core + CUDA provider, npm pack, checksummed)
## into the cache, where `serve --provider cuda` finds it (docs/perf/gpu.md); ~290 MB download
setup-gpu:
	scripts/setup_gpu.sh

## gpu-check: rerankd on CUDA vs CPU and vs transformers on the same GPU, generated models, one
## results file (docs/perf/gpu.md); GPU_CHECK_ARGS=--dry-run checks the script on a CPU machine
gpu-check:
	scripts/gpu_check.sh $(GPU_CHECK_ARGS)

## setup-browser: Debian's Chromium (apt-get when missing) and the pinned playwright-core (npm ci
## into the cache) for the browser tests (idempotent)
setup-browser:
	scripts/setup_browser.sh

## setup-mcp: the pinned MCP TypeScript SDK (npm ci into the cache), the client of the MCP tests
## (idempotent)
setup-mcp:
	scripts/setup_mcp.sh

## setup-clients: the pinned client SDKs of the embedding tests (OpenAI, LangChain, Vercel AI SDK,
## Hugging Face inference; npm ci into the cache)
setup-clients:
	scripts/setup_clients.sh

## setup-postgres: Debian's postgresql package (apt-get when missing) for the PostgreSQL tests,
## which start throwaway servers of their own from its binaries (internal/pgtest); idempotent
setup-postgres:
	scripts/setup_postgres.sh

build:
	$(GO) build -buildvcs=auto -o bin/ ./cmd/rerankd ./cmd/rerankd-bench ./cmd/eval

## run: set up, build, and serve the rerank API on the embedded default (no model files needed).
## RUN_ARGS adds flags, e.g. make run RUN_ARGS="--model DIR --addr 0.0.0.0:8080".
run: setup build
	$(BIN) serve $(RUN_ARGS)

## test: everything CI checks: setup; vet, go.mod tidy, lint, govulncheck and the Python scripts'
## tests side by side (scripts/together.sh); all Go tests in two tiers (scripts/test_tiers.txt):
## the numeric oracles without the race detector, then every other package and every
## goroutine-starting test under it; the image. Each phase reports its wall time (scripts/phase.sh).
PHASE := scripts/phase.sh
SUBMAKE := $(MAKE) --no-print-directory
# -trimpath for every go command the tests run: without it the go command keys its build, vet and
# lint results by the clone's folder, and CI clones into a new folder each time, so nothing this
# project compiled, vetted or linted before is reused; with it a kept cache is (docs/testing.md).
test test-short: export GOFLAGS += -trimpath
test:
	@$(PHASE) setup $(SUBMAKE) setup
	@$(PHASE) setup-browser $(SUBMAKE) setup-browser
	@$(PHASE) setup-postgres $(SUBMAKE) setup-postgres
	@$(PHASE) setup-mcp $(SUBMAKE) setup-mcp
	@$(PHASE) setup-clients $(SUBMAKE) setup-clients
	@MAKE="$(MAKE)" scripts/together.sh checks vet tidy lint vulncheck pytest
	@scripts/gotest.sh oracle race -timeout 45m
	@$(PHASE) image-test $(SUBMAKE) image-test

## test-short: a developer's inner loop: every package's tests with -short (the crash loops
## shrink; soaks, replicas, start-bench, MCP client, browsers and the slowest oracle cases skip), without the
## race detector; `make test` is what CI runs
test-short:
	@scripts/gotest.sh short -timeout 10m

## fresh-check: run .ci/run on a clone of HEAD as a new machine would (empty HOME, Go caches,
## toolchain, rerankd cache, npm cache); FRESH_ARGS="--keep-caches" uses this machine's Go module,
## build and golangci-lint caches instead. See scripts/fresh_check.sh --help.
fresh-check:
	scripts/fresh_check.sh $(FRESH_ARGS)

## pytest: syntax-check the Python scripts and run their stdlib-only unit tests
pytest: build
	python3 -m py_compile scripts/export_onnx.py scripts/transformers_check.py scripts/gpu_check.py
	python3 -m unittest discover -s scripts -p 'test_*.py'


vet:
	$(GO) vet ./...

## tidy: fail when `go mod tidy` would change go.mod or go.sum (prints the diff)
tidy:
	$(GO) mod tidy -diff

## lint: golangci-lint (installed once per version and toolchain into the cache, built outside the
## module so our go.mod is neither read nor touched; a temp folder beside it keeps an interrupted
## install from leaving a half-written binary)
lint:
	@test -x $(LINTBIN) || { echo "installing golangci-lint $(GOLANGCI_VERSION) for $(GOTOOLCHAIN) into $(LINTDIR) (once)"; \
		mkdir -p $(LINTDIR) && tmp=$$(mktemp -d $(LINTDIR).tmp.XXXXXX) && \
		(cd / && GOBIN=$$tmp GOFLAGS= $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)) && \
		mv $$tmp/golangci-lint $(LINTBIN) && rmdir $$tmp || { rm -rf $$tmp; exit 1; }; }
	$(LINTBIN) run ./...

## fuzz: run every fuzz target of every package for FUZZTIME each
fuzz: setup
	@set -e; for f in $$(grep -l '^func Fuzz' $$(git ls-files '*_test.go')); do \
		pkg=./$$(dirname $$f); for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$f | cut -c6-); do \
		echo "== $$pkg $$t"; $(GO) test $$pkg -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s; done; done

## bench: scoring speed of a full-size (Qwen3-Reranker-0.6B-shaped, random-weight) model vs a
## one-pair-per-call float32 baseline and the ORT MatMul peak, all measured in one run: float32
## weights, then int8 (score error vs float32 included). A folder written before the int8
## variant or the cross-request prefix cache (past_key inputs) existed is rewritten once (same
## seed, same weights).
FULL_MODEL ?= $(CACHE)/models/testmodel-full-seed1
bench: setup build
	@grep -qa past_key $(FULL_MODEL)/shared_prefix.int8.onnx 2>/dev/null || $(LAB) testmodel --size full --seed 1 --out $(FULL_MODEL)
	$(LAB) bench --model $(FULL_MODEL) --json
	$(LAB) bench --model $(FULL_MODEL) --quant int8 --json

## bench-encoders: bench on generated cross-encoders of bge-reranker-v2-m3's shape (XLM-R, 568M)
## and ms-marco-MiniLM-L-6-v2's (BERT, 22M), float32 then int8: batched vs one pair per call, the
## served composition, efficiency against the same-run MatMul peak, int8's error, peak RSS, and a
## fresh server per variant measured at ready and after 100 requests (docs/perf/encoders-memory.md).
## Their tokenizers are the tokenizer package's small trained test files (more tokens per word than
## the real ones: the ratios are the figures to read, not pairs/s). A cached folder converted by an
## older rerankd (weights inside model.onnx) is rewritten in place with external data.
ENC_MODELS ?= $(CACHE)/models/encoders-seed1
.PHONY: bench-encoders
bench-encoders: setup build
	@for m in xlmr:unigram/xlmr-current.json bert:wordpiece/bert-uncased.json; do a=$${m%%:*}; t=$${m#*:}; \
		test -f $(ENC_MODELS)/$$a/model.int8.onnx || { $(LAB) testmodel --arch $$a --size full --seed 1 \
			--tokenizer tokenizer/testdata/$$t --out $(ENC_MODELS)/$$a-ckpt && \
			$(BIN) convert --from $(ENC_MODELS)/$$a-ckpt --out $(ENC_MODELS)/$$a && rm -rf $(ENC_MODELS)/$$a-ckpt; } || exit 1; \
		test -f $(ENC_MODELS)/$$a/model.onnx.data || $(BIN) convert --from $(ENC_MODELS)/$$a --out $(ENC_MODELS)/$$a || exit 1; \
		$(LAB) bench --model $(ENC_MODELS)/$$a --json && $(LAB) bench --model $(ENC_MODELS)/$$a --quant int8 --memory-requests 0 --json || exit 1; done

## bench-quant: every quantised variant of the full-size random-weight model against its float32
## in one run: max/mean |dlogit| and |dscore|, Kendall tau, top-5 agreement, pairs/s as same-run
## ratios to int8 (docs/perf/int8-precision.md). The variants go into their own folder, written once
## (int8-smooth's calibration runs the plain-Go reference pass: minutes at this size).
FULL_QUANT_MODEL ?= $(CACHE)/models/testmodel-full-seed1-quant
QUANT_VARIANTS ?= int8,int8-block32,int8-group128,int8-mixed,int8-smooth,int8-smooth-block32
.PHONY: bench-quant
bench-quant: setup build
	@test -f $(FULL_QUANT_MODEL)/model.int8-smooth-block32.onnx || $(LAB) testmodel --size full --seed 1 --out $(FULL_QUANT_MODEL) --quant $(QUANT_VARIANTS)
	$(LAB) quant-check --model $(FULL_QUANT_MODEL) --rounds 2 --json

## loadtest: HTTP throughput/latency at 1, 8, 64 clients, server overhead vs raw model time, and
## overload behaviour (429s), for the tiny and the full-size random-weight models
TINY_MODEL ?= $(CACHE)/models/testmodel-tiny-seed1
loadtest: setup build
	@test -f $(TINY_MODEL)/model.onnx || $(LAB) testmodel --size tiny --seed 1 --out $(TINY_MODEL)
	$(LAB) loadtest --model $(TINY_MODEL) --json
	@test -f $(FULL_MODEL)/model.onnx || $(LAB) testmodel --size full --seed 1 --out $(FULL_MODEL)
	$(LAB) loadtest --model $(FULL_MODEL) --candidates 2 --overload-requests 128 --json

## bench-tokenizer: tokens/s vs the Rust reference on one core, as a ratio
bench-tokenizer: setup
	scripts/bench_tokenizer.sh

## golden: regenerate tokenizer/testdata/golden.jsonl, testdata/unigram, testdata/wordpiece and
## testdata/components with the Rust reference (needs node/npm; spm_train for unigram), then the
## character tables derived from them (refchars_gen.go)
golden: setup
	scripts/tokenizer/regen_golden.sh
	scripts/tokenizer/unigram/regen.sh
	node scripts/tokenizer/components/props.js tokenizer/testdata/components/unicode-ref.json
	scripts/tokenizer/components/graphemes.sh
	node scripts/tokenizer/components/golden.js -update
	$(GO) test ./tokenizer -run TestRefChars -update

clean:
	rm -rf bin build

## Release artefacts (docs/user/install.md). RELEASE_CMDS are the binaries shipped: every one of
## these folders under cmd/ that exists. They are built reproducibly (-trimpath, no build id), and
## every archive entry is stamped with the commit's time (SOURCE_DATE_EPOCH), so two builds of one
## commit give the same image digest and the same archive bytes.
RELEASE_CMDS := $(notdir $(wildcard cmd/rerankd cmd/eval cmd/rerankd-bench))
RELEASE_CMDS_CSV = $(shell echo $(RELEASE_CMDS) | tr " " ,)
RELEASE_DIR := build/release
# Evaluated once (:=), so every step of one make run stamps the same values; VERSION=... on the
# command line and SOURCE_DATE_EPOCH in the environment win.
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION := $(shell git rev-parse HEAD 2>/dev/null)
ifndef SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH := $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
endif
IMAGE := build/rerankd-image.tar
DIST := build/rerankd-$(VERSION)-linux-amd64.tar.gz
IMAGE_LICENSES := MIT AND Apache-2.0 AND LGPL-2.1-or-later AND GPL-3.0-or-later WITH GCC-exception-3.1 AND MPL-2.0
MKRELEASE = eval "$$(scripts/setup.sh)" && $(GO) run ./cmd/mkrelease

.PHONY: release-bins image dist image-test setup-image
release-bins:
	@mkdir -p $(RELEASE_DIR)
	CGO_ENABLED=1 $(GO) build -trimpath -ldflags "-s -w -buildid= -X github.com/rerankd/rerankd/cmd/internal/version.override=$(VERSION)" -o $(RELEASE_DIR)/ $(addprefix ./cmd/,$(RELEASE_CMDS))

## setup-image: the pinned Debian packages of the image's base layer (packaging/debian.lock),
## apt-get download into the cache, checksummed (idempotent)
setup-image:
	scripts/setup_image.sh

## image: the OCI image archive $(IMAGE) (docker load / podman load), built without a daemon
image: setup setup-image release-bins
	$(MKRELEASE) image --out $(IMAGE) --bin $(RELEASE_DIR) --cmds $(RELEASE_CMDS_CSV) \
		--ort-lib "$$ORT_LIB" --tokenizer "$$RERANKD_TOKENIZER" --version $(VERSION) --revision $(REVISION) \
		--epoch $(SOURCE_DATE_EPOCH) --spdx "$(IMAGE_LICENSES)" --contents build/base-layer.txt

## image-test: build the image, unpack it and run it as its user in fresh namespaces (root needed):
## /health, /ready, /rerank, memory add and search on the /data volume, SIGTERM, restart
image-test: image
	RERANKD_IMAGE_ARCHIVE=$(abspath $(IMAGE)) $(GO) test -count=1 -timeout 5m -run TestImage ./internal/release/

## dist: the release archive $(DIST): binaries, ONNX Runtime beside them, tokenizer, licences,
## README, SHA256SUMS
dist: setup release-bins
	$(MKRELEASE) dist --out $(DIST) --bin $(RELEASE_DIR) --cmds $(RELEASE_CMDS_CSV) \
		--ort-lib "$$ORT_LIB" --tokenizer "$$RERANKD_TOKENIZER" --version $(VERSION) --epoch $(SOURCE_DATE_EPOCH)

## vulncheck: govulncheck against a local vulnerability database built from a pinned
## golang.org/x/vulndb snapshot (no vuln.go.dev access needed); fails when our code reaches a
## vulnerable symbol. The database date is printed. Cached under $CACHE/vulndb and $CACHE/tools.
.PHONY: vulncheck
vulncheck:
	scripts/vulncheck.sh

## soak: the long load test (not in CI): ramp 1 -> 256 clients over 30 s with mixed request sizes
## (1-100 documents), hold them for SOAK, on the lexical default and the tiny random-weight model.
## Fails on any answer but 200/429, settled RSS not back near its baseline, or a goroutine leak.
SOAK ?= 5m
.PHONY: soak
soak: setup build
	$(LAB) loadtest --soak $(SOAK) --ramp 30s
	@test -f $(TINY_MODEL)/model.onnx || $(LAB) testmodel --size tiny --seed 1 --out $(TINY_MODEL)
	$(LAB) loadtest --soak $(SOAK) --ramp 30s --model $(TINY_MODEL)

## bench-retrieval: retrieval benchmarks at the issue's sizes, ratios measured in the same run:
## BM25 latency at 10k/100k/1M vs 10k, ingest; HNSW (ours and coder/hnsw) recall@10 and latency
## vs the exact scan at 100k x 1024, build rate, heap per 100k, rebuild vs Load; store ingest
## (batch vs single fsync). Takes about an hour on two idle cores and ~8 GB of memory.
.PHONY: bench-retrieval
bench-retrieval:
	BM25_1M=1 nice -n 10 $(GO) test -run '^$$' -bench 'BM25_Search' -benchtime 50x -timeout 0 ./retrieval/bm25
	nice -n 10 $(GO) test -run '^$$' -bench 'BM25_Ingest' -benchtime 3s ./retrieval/bm25
	nice -n 10 $(GO) test -run '^$$' -bench 'Store_Ingest' -benchtime 3s -timeout 0 ./retrieval/store/bolt
	HNSW_BENCH_N=$${HNSW_BENCH_N:-100000} HNSW_BENCH_EF=$${HNSW_BENCH_EF:-50,100,200,400,800,1600} \
		nice -n 10 $(GO) test -run '^$$' -bench 'HNSW_' -benchtime 200x -timeout 0 ./retrieval/hnsw
