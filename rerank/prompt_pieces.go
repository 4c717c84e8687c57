package rerank

import (
	"slices"
	"strings"
)

// Prompts of templates in Pieces, built and cut as mixedbread's
// mxbai-rerank package does (MxbaiRerankV2.prepare_inputs):
//
//	prefix + q + sep + d + sep + suffix
//
// with q the instruction and query fields encoded together and d the
// document field, each alone. Its max_length L counts q + sep + d only
// (the fixed parts, "predefined_length", come on top), so rerankd's
// MaxLength, which counts the whole prompt, maps to
// L = MaxLength - len(prefix) - 2·len(sep) - len(suffix): the package's
// default L of 8192 is --max-length 8192 + that fixed length. q keeps its
// first L·3/4 tokens (integer division); sep + d, truncated only_second,
// keeps its first L - len(q) tokens, so the document keeps
// L - len(q) - len(sep). The package's cap of d at the model's position
// limit never binds tighter than that while MaxLength is within it.

// piecesRoom is L, the tokens q + sep + d may take.
func (p *promptEncoder) piecesRoom() int {
	return p.cfg.MaxLength - len(p.prefix) - 2*len(p.sep) - len(p.suffix)
}

// piecesQuery encodes prefix + q, q cut to 3/4 of L. Conversation turns,
// rerankd's own addition, are part of the query text (queryText).
func (p *promptEncoder) piecesQuery(instruction, query string, context []string) queryPart {
	qBefore, qAfter, _ := strings.Cut(p.tmpl.Query, phQuery)
	q := p.enc(append(p.instructionParts(instruction), tmplPart(qBefore), userPart(queryText(query, context)), tmplPart(qAfter))...)
	qp := queryPart{}
	if keep := p.piecesRoom() * 3 / 4; len(q) > keep {
		q, qp.truncated = q[:keep], true
	}
	qp.ids = slices.Concat(p.prefix, q)
	return qp
}

// piecesDoc completes a prompt for one document: sep + d, d cut to what L
// leaves, then its text after the document field's label (the document's
// own tokens) cut to the request's limit, from the start with keepEnd, so
// the model still reads "document:" before what is left.
func (p *promptEncoder) piecesDoc(q queryPart, doc string, lim docLimits) Prompt {
	dBefore, dAfter, _ := strings.Cut(p.tmpl.Document, phDocument)
	d := p.enc(tmplPart(dBefore), userPart(doc), tmplPart(dAfter))
	label := 0
	if len(d) >= len(p.docLabel) && slices.Equal(d[:len(p.docLabel)], p.docLabel) {
		label = len(p.docLabel)
	}
	room := p.piecesRoom() - (len(q.ids) - len(p.prefix)) - len(p.sep)
	pr := Prompt{Truncated: q.truncated}
	if len(d) > room {
		d, pr.Truncated, pr.DocCut = d[:max(room, 0)], true, true
	}
	label = min(label, len(d))
	if body := len(d) - label; lim.maxTokens > 0 && body > lim.maxTokens {
		if lim.keepEnd {
			d = slices.Concat(d[:label], d[len(d)-lim.maxTokens:])
		} else {
			d = d[:label+lim.maxTokens]
		}
		pr.Truncated, pr.DocCut = true, true
	}
	pr.DocTokens = len(d) - label
	pr.IDs = slices.Concat(q.ids, p.sep, d, p.sep, p.suffix)
	return pr
}
