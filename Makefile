# rerankd: the two commands that matter are `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
GOLANGCI_VERSION := v2.15.0
GOBIN := $(shell $(GO) env GOPATH)/bin
BIN := bin/rerankd
FUZZTIME ?= 30s

.PHONY: all setup build run test vet lint fuzz bench bench-tokenizer golden pytest clean

all: build

## setup: install the ONNX Runtime library and Qwen3 tokenizer into the cache (idempotent, checksummed)
setup:
	scripts/setup.sh

build:
	$(GO) build -o $(BIN) ./cmd/rerankd

## run: set up, build, and run the main job. Until the server lands this
## tokenizes a sample (a full Qwen3-Reranker prompt among them).
run: setup build
	$(BIN) tokenize < scripts/sample.jsonl

## test: everything CI checks: setup, vet, lint, the export script's tests, all Go tests (race detector)
test: setup vet lint pytest
	$(GO) test -race -count=1 ./...

## pytest: syntax-check scripts/export_onnx.py and run its stdlib-only unit tests
pytest: build
	python3 -m py_compile scripts/export_onnx.py
	python3 -m unittest discover -s scripts -p 'test_export_onnx.py'


vet:
	$(GO) vet ./...

lint:
	@test -x $(GOBIN)/golangci-lint && $(GOBIN)/golangci-lint version 2>/dev/null | grep -q "$(GOLANGCI_VERSION:v%=%)" || \
		{ echo "installing golangci-lint $(GOLANGCI_VERSION) (once)"; $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION); }
	$(GOBIN)/golangci-lint run ./...

## fuzz: run every fuzz target for FUZZTIME each
fuzz: setup
	@set -e; for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' tokenizer/*_test.go | cut -c6-); do \
		echo "== $$t"; $(GO) test ./tokenizer -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s; done

## bench: scoring speed of a full-size (Qwen3-Reranker-0.6B-shaped, random-weight) model vs a
## one-pair-per-call baseline and the ORT MatMul peak, all measured in one run
FULL_MODEL ?= $(or $(RERANKD_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rerankd)/models/testmodel-full-seed1
bench: setup build
	@test -f $(FULL_MODEL)/model.onnx || $(BIN) testmodel --size full --seed 1 --out $(FULL_MODEL)
	$(BIN) bench --model $(FULL_MODEL) --json

## bench-tokenizer: tokens/s vs the Rust reference on one core, as a ratio
bench-tokenizer: setup
	scripts/bench_tokenizer.sh

## golden: regenerate tokenizer/testdata/golden.jsonl with the Rust reference (needs node/npm)
golden: setup
	scripts/tokenizer/regen_golden.sh

clean:
	rm -rf bin
