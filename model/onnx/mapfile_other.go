//go:build !unix

package onnx

import "os"

// mapFile reads path whole where memory mapping is not available.
func mapFile(path string) (data []byte, release func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
