#!/bin/sh
# Regenerates onnx.pb.go from the onnx.proto of ONNX 1.12 as shipped by Debian.
# Needs: apt-get install -y libonnx-dev protobuf-compiler
#        go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
# The generated file is committed, so builds and CI never need protoc.
set -eu
cd "$(dirname "$0")"
PATH="$(go env GOPATH)/bin:$PATH" protoc \
	--proto_path=/usr/include/onnx \
	--go_out=. --go_opt=paths=source_relative \
	--go_opt=Monnx.proto=github.com/rerankd/rerankd/model/onnx/onnxpb \
	onnx.proto
