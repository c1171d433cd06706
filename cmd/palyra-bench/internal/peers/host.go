package peers

// callState is what the palyra host functions see of one call. The wasmtime
// and wazero peers share it; each resolves the caller's linear memory to a
// []byte and passes it in.
type callState struct {
	// bound is false while _initialize runs: no invocation is bound then
	// (sdk/ABI.md §1).
	bound bool
	doc   []byte // the input document (§3)
	out   []byte // the output buffer (§4)

	pending    []byte // the pending response (§2.2)
	hasPending bool
}

// span returns mem[ptr:ptr+n], or false when that does not lie inside mem.
func span(mem []byte, ptr, n int32) ([]byte, bool) {
	p, l := int64(uint32(ptr)), int64(uint32(n))
	if p+l > int64(len(mem)) {
		return nil, false
	}
	return mem[p : p+l], true
}

// readDoc copies the first min(n, len(src)) bytes of src to ptr.
func readDoc(mem []byte, ptr, n int32, src []byte) int32 {
	if n < 0 {
		return codeInvalidRequest
	}
	if int(n) > len(src) {
		n = int32(len(src))
	}
	dst, ok := span(mem, ptr, n)
	if !ok {
		return codeInvalidRequest
	}
	return int32(copy(dst, src))
}

// input-len: () -> i32.
func (c *callState) inputLen() int32 {
	if !c.bound {
		return codeInvalidRequest
	}
	return int32(len(c.doc))
}

// input-read: (ptr, len) -> i32.
func (c *callState) inputRead(mem []byte, ptr, n int32) int32 {
	if !c.bound {
		return codeInvalidRequest
	}
	return readDoc(mem, ptr, n, c.doc)
}

// output-write: (ptr, len) -> i32.
func (c *callState) outputWrite(mem []byte, ptr, n int32) int32 {
	if !c.bound {
		return codeInvalidRequest
	}
	src, ok := span(mem, ptr, n)
	if !ok {
		return codeInvalidRequest
	}
	if len(c.out)+len(src) > maxOutputBytes {
		return codeTooLarge
	}
	c.out = append(c.out, src...)
	return 0
}

// capability-call: (handle, req_ptr, req_len) -> i32. These peers grant
// nothing, so every well-formed call is not_granted (-1), and its error
// detail becomes the pending response.
func (c *callState) capabilityCall(mem []byte, _, ptr, n int32) int32 {
	if !c.bound {
		return codeInvalidRequest
	}
	c.hasPending = true
	if _, ok := span(mem, ptr, n); !ok {
		c.pending = invalidRequestDocument
		return codeInvalidRequest
	}
	c.pending = notGrantedDocument
	return codeNotGranted
}

// response-len: () -> i32.
func (c *callState) responseLen() int32 {
	if !c.bound || !c.hasPending {
		return codeInvalidRequest
	}
	return int32(len(c.pending))
}

// response-read: (ptr, len) -> i32.
func (c *callState) responseRead(mem []byte, ptr, n int32) int32 {
	if !c.bound || !c.hasPending {
		return codeInvalidRequest
	}
	return readDoc(mem, ptr, n, c.pending)
}

// grantKinds are the kinds of palyra:plugins/host-capabilities@0.1.0; each
// has <kind>-count, always 0 here, and <kind>-handle, always -1.
var grantKinds = []string{"http", "secret", "storage", "channel"}
