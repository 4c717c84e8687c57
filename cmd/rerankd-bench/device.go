package main

import (
	"github.com/rerankd/rerankd/cmd/internal/app"
	"github.com/rerankd/rerankd/cmd/internal/device"
)

// withDevice sets c's provider, device and CUDA settings from the tool's
// device flags (nil: serve's defaults, the CPU).
func withDevice(c *app.Config, dev *device.Flags) {
	if dev == nil {
		return
	}
	c.Model.Provider, c.Model.Device, c.Model.CUDA = dev.Provider, dev.Device, dev.CUDA()
}
