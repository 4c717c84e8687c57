package store

import "iter"

// Pager reads one page of a namespace (Backend.Page).
type Pager interface {
	Page(ns, after string, limit int, withVectors bool) ([]Record, string, error)
}

// Page is one read of a namespace: its records, and the cursor they were
// read after ("" for the first page), which names the page in errors.
type Page struct {
	Records []Record
	After   string
}

// Pages reads every record of ns in ID order, size records per Page call,
// so that no read holds the store for the whole namespace; writes made
// between pages may or may not be seen. A failed read is yielded once,
// with the cursor it was read after, and ends the sequence.
func Pages(p Pager, ns string, size int, withVectors bool) iter.Seq2[Page, error] {
	return func(yield func(Page, error) bool) {
		after := ""
		for {
			recs, next, err := p.Page(ns, after, size, withVectors)
			if err != nil {
				yield(Page{After: after}, err)
				return
			}
			if !yield(Page{Records: recs, After: after}, nil) || next == "" {
				return
			}
			after = next
		}
	}
}
