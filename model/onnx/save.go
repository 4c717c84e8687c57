package onnx

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/rerankd/rerankd/internal/atomicfile"
	"github.com/rerankd/rerankd/model/onnx/onnxpb"
)

// File names Save writes inside its directory.
const (
	ModelFile = "model.onnx"
	DataFile  = "model.onnx.data"
)

// maxInline is the most initializer data Save keeps inside the protobuf:
// protobuf messages cannot exceed 2 GiB (Go marshals larger ones without
// error, but ORT then fails to parse them), and the graph needs some room.
const maxInline = 1<<31 - 1<<26

// Save writes dir/model.onnx and, when the initializers are large (see
// Storage), dir/model.onnx.data. Each file is written to a temporary name
// and renamed into place (atomicfile.WriteAll), so a failed Save leaves no
// partial file and any previous model intact. Save must not run
// concurrently with other use of m.
func (m *Model) Save(dir string) error {
	if err := m.Storage.Validate(); err != nil {
		return fmt.Errorf("onnx: save: %w", err)
	}
	if err := m.Check(); err != nil {
		return fmt.Errorf("onnx: save: invalid model: %w", err)
	}
	total := m.InitializerBytes()
	external := m.Storage.ForceExternal || total > m.Storage.ExternalThreshold || total > maxInline
	modelPath, dataPath := filepath.Join(dir, ModelFile), filepath.Join(dir, DataFile)
	if !external {
		data, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.Proto)
		if err != nil {
			return fmt.Errorf("onnx: save: marshal: %w", err)
		}
		if err := writeAtomic(modelPath, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return fmt.Errorf("onnx: save: %w", err)
		}
		// A data file left by an earlier external save would be stale.
		if err := os.Remove(dataPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("onnx: save: remove stale data: %w", err)
		}
		return nil
	}

	g := m.Proto.GetGraph()
	inits, chunks, _ := externalize(g.Initializer, DataFile, m.Storage.Alignment)
	// Marshal a clone whose initializers refer to the data file. Cloning
	// with the initializers detached avoids copying gigabytes of weights.
	orig := g.Initializer
	g.Initializer = nil
	clone := proto.Clone(m.Proto).(*onnxpb.ModelProto)
	g.Initializer = orig
	clone.Graph.Initializer = inits
	header, err := proto.MarshalOptions{Deterministic: true}.Marshal(clone)
	if err != nil {
		return fmt.Errorf("onnx: save: marshal: %w", err)
	}

	// Data first: the new model.onnx never points at an old data file.
	if err := atomicfile.WriteAll(
		fileAt(dataPath, func(w io.Writer) error { return writeChunks(w, chunks) }),
		fileAt(modelPath, func(w io.Writer) error { _, err := w.Write(header); return err }),
	); err != nil {
		return fmt.Errorf("onnx: save: %w", err)
	}
	return nil
}

// writeChunks writes each chunk at its offset, zero-filling the gaps.
func writeChunks(w io.Writer, chunks []extChunk) error {
	var pos int64
	zeros := make([]byte, 1<<16)
	for _, c := range chunks {
		for pos < c.offset {
			n := min(c.offset-pos, int64(len(zeros)))
			if _, err := w.Write(zeros[:n]); err != nil {
				return err
			}
			pos += n
		}
		if _, err := w.Write(c.data); err != nil {
			return err
		}
		pos += int64(len(c.data))
	}
	return nil
}

// writeAtomic writes path atomically (a temporary file, fsynced, renamed
// into place, the folder fsynced).
func writeAtomic(path string, write func(io.Writer) error) error {
	return atomicfile.WriteAll(fileAt(path, write))
}

// fileAt is the file path of an atomicfile.WriteAll, written by write
// through a buffer, readable by all.
func fileAt(path string, write func(io.Writer) error) atomicfile.File {
	return atomicfile.File{Path: path, Perm: 0o644, Write: func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<20)
		if err := write(bw); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}}
}
