// Package pagecache drops files from the operating system's page cache,
// counts how much of a file is resident, and asks the kernel to read
// ranges ahead. It exists so a start of the server can be measured as a
// first start (the model's files not in memory, as after a reboot or after
// another large model was loaded) apart from a repeat start, and so the
// files a session is about to map can be read in large sequential requests
// instead of one page fault at a time.
//
// Contracts:
//   - Evict writes a file's dirty pages back before dropping it (a dirty
//     page cannot be dropped), and drops only clean, unmapped pages: pages
//     another process has mapped stay resident, so Resident after Evict is
//     the truth to check, not an assumption.
//   - Resident never reads the file's contents (mincore on a mapping that
//     is never touched), so counting does not change what it counts.
//   - Prefetch is a hint: it starts reads and returns; a range past the end
//     of the file is clipped, and an error means nothing about the file's
//     contents.
//   - On systems without these calls (anything but Linux) Evict and
//     Resident return ErrUnsupported and Prefetch does nothing.
package pagecache
