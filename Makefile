# rerankd: the two commands that matter are `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
GOLANGCI_VERSION := v2.15.0
GOBIN := $(shell $(GO) env GOPATH)/bin
BIN := bin/rerankd
FUZZTIME ?= 30s

.PHONY: all setup build run test vet lint fuzz bench-tokenizer golden clean

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

## test: everything CI checks: setup, vet, lint, all tests with the race detector
test: setup vet lint
	$(GO) test -race -count=1 ./...

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

## bench-tokenizer: tokens/s vs the Rust reference on one core, as a ratio
bench-tokenizer: setup
	scripts/bench_tokenizer.sh

## golden: regenerate tokenizer/testdata/golden.jsonl with the Rust reference (needs node/npm)
golden: setup
	scripts/tokenizer/regen_golden.sh

clean:
	rm -rf bin
