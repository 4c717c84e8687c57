//go:build ignore

package main

// The binding (onnxruntime_go v1.27.0) has no AddRunConfigEntry; this reaches
// ORT's C API through the already-loaded library. Lab use only: run with
// CGO_CFLAGS=-I$(go env GOMODCACHE)/github.com/yalue/onnxruntime_go@v1.27.0.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include "onnxruntime_c_api.h"

static const char *add_run_cfg(const char *lib, OrtRunOptions *ro, const char *k, const char *v) {
	void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
	if (!h) return "library not loaded";
	const OrtApiBase *(*base)(void) = dlsym(h, "OrtGetApiBase");
	if (!base) return "no OrtGetApiBase";
	const OrtApi *api = base()->GetApi(24);
	if (!api) return "no API 24";
	OrtStatus *st = api->AddRunConfigEntry(ro, k, v);
	if (st) { const char *m = api->GetErrorMessage(st); return m; }
	return NULL;
}
*/
import "C"

import (
	"os"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"
)

func addRunConfig(ro *ort.RunOptions, k, v string) {
	lib := C.CString(os.Getenv("ORT_LIB"))
	ck, cv := C.CString(k), C.CString(v)
	defer C.free(unsafe.Pointer(lib))
	defer C.free(unsafe.Pointer(ck))
	defer C.free(unsafe.Pointer(cv))
	p := *(**C.OrtRunOptions)(unsafe.Pointer(ro))
	if msg := C.add_run_cfg(lib, p, ck, cv); msg != nil {
		panic(C.GoString(msg))
	}
}
