package echonet

// How a node answers (SPEC §6): one decoded request in, the replies (or none) out.

// IsRequest reports whether a node answers frames of this service. Replies, refusals, INF
// and unknown codes are ignored.
func IsRequest(e ESV) bool {
	switch e {
	case SetI, SetC, Get, InfReq, SetGet, InfC:
		return true
	}
	return false
}

// replyESV is the service of the reply to a request: the success code when every property
// succeeded, else the refusal.
func replyESV(req ESV, ok bool) ESV {
	type pair struct{ ok, refused ESV }
	var p pair
	switch req {
	case Get:
		p = pair{GetRes, GetSNA}
	case InfReq:
		p = pair{Inf, InfSNA}
	case SetI:
		p = pair{0, SetISNA} // success is not answered
	case SetC:
		p = pair{SetRes, SetCSNA}
	case SetGet:
		p = pair{SetGetRes, SetGetSNA}
	case InfC:
		p = pair{InfCRes, InfCRes} // INFC cannot fail
	}
	if ok {
		return p.ok
	}
	return p.refused
}

// Responder answers the requests of one node. It keeps one reply frame and one output buffer
// and reuses them for every request, so answering allocates nothing once they have grown to
// the largest reply seen. Not safe for concurrent use: a node has one receive loop.
type Responder struct {
	node  *Node
	reply Frame
	out   []byte
}

// NewResponder returns a responder for node.
func NewResponder(node *Node) *Responder {
	return &Responder{node: node, out: make([]byte, 0, 4096)}
}

// Handle answers req, a decoded well-formed frame. It returns false when the frame is
// ignored: not a request, or addressed to no object of the node. Otherwise each object the
// DEOJ names answers once through send, with the encoded reply, which is valid only during
// that call; a SetI that succeeds sends nothing.
func (r *Responder) Handle(req *Frame, send func(reply []byte)) bool {
	if !IsRequest(req.ESV) {
		return false
	}
	handled := false
	for _, o := range r.node.Objects {
		if !o.AddressedBy(req.DEOJ) {
			continue
		}
		handled = true
		if reply, ok := r.answer(o, req); ok {
			send(reply)
		}
	}
	return handled
}

// answer applies req to o and encodes the reply; ok is false when there is none to send.
func (r *Responder) answer(o *Object, req *Frame) (reply []byte, ok bool) {
	rf := &r.reply
	rf.TID, rf.SEOJ, rf.DEOJ = req.TID, o.EOJ, req.SEOJ
	rf.Props, rf.GetProps = rf.Props[:0], rf.GetProps[:0]
	success := true
	switch req.ESV {
	case Get, InfReq:
		rf.Props, success = readProperties(o, rf.Props, req.Props)
	case SetI, SetC:
		rf.Props, success = writeProperties(o, rf.Props, req.Props)
	case SetGet:
		// The set part first, so the get part reads the values just written.
		var setOK, getOK bool
		rf.Props, setOK = writeProperties(o, rf.Props, req.Props)
		rf.GetProps, getOK = readProperties(o, rf.GetProps, req.GetProps)
		success = setOK && getOK
	case InfC:
		for _, p := range req.Props {
			rf.Props = append(rf.Props, Property{EPC: p.EPC})
		}
	}
	if req.ESV == SetI && success {
		return nil, false
	}
	rf.ESV = replyESV(req.ESV, success)
	out, err := rf.Append(r.out[:0])
	if err != nil {
		// Unreachable: a reply has the request's property count and EDTs of at most 255
		// bytes (the object's own, or the request's echoed). Better silent than malformed.
		return nil, false
	}
	r.out = out[:0] // keep the grown buffer for the next reply
	return out, true
}

// readProperties appends the reply triples of a Get or INF_REQ: each EPC with its EDT, or
// with PDC 0 when the object cannot read it. The request's EDTs (normally empty) are ignored.
func readProperties(o *Object, dst, req []Property) ([]Property, bool) {
	ok := true
	for _, p := range req {
		edt, readable := o.Get(p.EPC)
		ok = ok && readable
		dst = append(dst, Property{EPC: p.EPC, EDT: edt})
	}
	return dst, ok
}

// writeProperties applies the properties of a Set in order and appends the reply triples:
// an accepted EPC with PDC 0, a refused one with the request's PDC and EDT. A refused
// property changes nothing; the accepted ones stay applied either way.
func writeProperties(o *Object, dst, req []Property) ([]Property, bool) {
	ok := true
	for _, p := range req {
		if o.Set(p.EPC, p.EDT) {
			dst = append(dst, Property{EPC: p.EPC})
		} else {
			ok = false
			dst = append(dst, p)
		}
	}
	return dst, ok
}
