package wasmbin

import "slices"

func (p *parser) elements(r *reader) error {
	n, err := r.count("element segment count", "MaxElementSegments", p.lim.MaxElementSegments, 3)
	if err != nil {
		return err
	}
	var tables []uint32 // the tables of active segments, with repeats
	for i := 0; i < n; i++ {
		table, active, err := p.element(r)
		if err != nil {
			return within(err, "element segment "+itoa(uint64(i)))
		}
		if active {
			tables = append(tables, table)
		}
	}
	p.m.ElementSegments = n
	if len(tables) > 0 {
		slices.Sort(tables)
		p.m.ElementTables = slices.Clip(slices.Compact(tables))
	}
	return nil
}

// element reads one element segment and returns the table it initializes
// and whether it is active.
func (p *parser) element(r *reader) (table uint32, active bool, err error) {
	at := r.off()
	flags, err := r.u32()
	if err != nil {
		return 0, false, err
	}
	if flags > 7 {
		return 0, false, r.failAt(at, "invalid flags %d", flags)
	}
	// Bit 0 set: passive, or with bit 1 also set, declarative. Bit 0 clear:
	// active, and bit 1 says an explicit table index follows. Bit 2: the
	// items are expressions rather than function indices.
	active = flags&0x01 == 0
	exprs := flags&0x04 != 0
	var tt TableType
	if active {
		if flags&0x02 != 0 {
			if table, err = r.u32(); err != nil {
				return 0, false, err
			}
		}
		if uint64(table) >= uint64(len(p.tables)) {
			return 0, false, r.failAt(at, "table index %d out of range (%d tables)", table, len(p.tables))
		}
		tt = p.tables[table]
		offType := I32
		if tt.Is64 {
			offType = I64
		}
		if err := p.constExpr(r, offType); err != nil {
			return 0, false, within(err, "offset")
		}
	}
	elemType := FuncRef
	if flags&0x03 != 0 { // an element kind or a reference type follows
		kindAt := r.off()
		if exprs {
			if elemType, err = refType(r); err != nil {
				return 0, false, err
			}
		} else if kind, err := r.byte(); err != nil {
			return 0, false, err
		} else if kind != 0x00 {
			return 0, false, r.failAt(kindAt, "invalid element kind 0x%02x", kind)
		}
	}
	if active && tt.Elem != elemType {
		return 0, false, r.failAt(at, "%s elements for table %d of %s", elemType, table, tt.Elem)
	}
	minSize := 1 // a function index
	if exprs {
		minSize = 2 // an instruction and end
	}
	items, err := r.count("item count", "MaxTableEntries", p.lim.MaxTableEntries, minSize)
	if err != nil {
		return 0, false, err
	}
	for j := 0; j < items; j++ {
		if exprs {
			if err := p.constExpr(r, elemType); err != nil {
				return 0, false, within(err, "item "+itoa(uint64(j)))
			}
			continue
		}
		idxAt := r.off()
		idx, err := r.u32()
		if err != nil {
			return 0, false, err
		}
		if uint64(idx) >= uint64(p.nFuncs) {
			return 0, false, r.failAt(idxAt, "function index %d out of range (%d functions)", idx, p.nFuncs)
		}
	}
	return table, active, nil
}

func (p *parser) dataCount(r *reader) error {
	at := r.off()
	n, err := r.u32()
	if err != nil {
		return err
	}
	if uint64(n) > uint64(p.lim.MaxDataSegments) {
		return r.overLimit(at, "MaxDataSegments", "data segment count", uint64(n), p.lim.MaxDataSegments)
	}
	p.m.DataCount = &n
	return nil
}

func (p *parser) code(r *reader) error {
	p.sawCode = true
	p.m.CodeBytes = len(r.buf)
	at := r.off()
	n, err := r.count("function body count", "MaxFunctions", p.lim.MaxFunctions, 3)
	if err != nil {
		return err
	}
	if n != len(p.m.Functions) {
		return r.failAt(at, "code section has %d function bodies but the function section declares %d functions", n, len(p.m.Functions))
	}
	for i := 0; i < n; i++ {
		if err := p.body(r); err != nil {
			return within(err, "function "+itoa(uint64(p.nFuncs-n+i)))
		}
	}
	p.m.CodeBodies = n
	return nil
}

// body frames one function body, reads its local declarations and checks
// that its instructions end with an end opcode; it does not decode them.
func (p *parser) body(r *reader) error {
	sizeAt := r.off()
	size, err := r.u32()
	if err != nil {
		return err
	}
	if uint64(size) > uint64(p.lim.MaxFunctionBodyBytes) {
		return r.overLimit(sizeAt, "MaxFunctionBodyBytes", "body size", uint64(size), p.lim.MaxFunctionBodyBytes)
	}
	if uint64(size) > uint64(r.left()) {
		return r.failAt(sizeAt, "body size %d runs past the end of the section (%d bytes left)", size, r.left())
	}
	b := &reader{buf: r.buf[r.pos : r.pos+int(size)], base: r.off(), section: r.section, lim: r.lim}
	r.pos += int(size)
	p.m.MaxBodyBytes = max(p.m.MaxBodyBytes, int(size))

	groups, err := b.count("local declaration count", "MaxFunctionLocals", p.lim.MaxFunctionLocals, 2)
	if err != nil {
		return err
	}
	var locals uint64
	for i := 0; i < groups; i++ {
		at := b.off()
		n, err := b.u32()
		if err != nil {
			return err
		}
		locals += uint64(n)
		if locals > uint64(p.lim.MaxFunctionLocals) {
			return b.overLimit(at, "MaxFunctionLocals", "local count", locals, p.lim.MaxFunctionLocals)
		}
		if _, err := valType(b); err != nil {
			return err
		}
	}
	p.m.MaxBodyLocals = max(p.m.MaxBodyLocals, int(locals))
	p.m.Locals += int64(locals)
	if b.left() == 0 || b.buf[len(b.buf)-1] != 0x0B {
		return b.failAt(b.base+int64(len(b.buf)), "body does not end with an end opcode")
	}
	return nil
}

func (p *parser) data(r *reader) error {
	p.sawData = true
	at := r.off()
	n, err := r.count("data segment count", "MaxDataSegments", p.lim.MaxDataSegments, 2)
	if err != nil {
		return err
	}
	if p.m.DataCount != nil && uint64(*p.m.DataCount) != uint64(n) {
		return r.failAt(at, "data section has %d segments but the data count section declares %d", n, *p.m.DataCount)
	}
	p.m.DataSegments = make([]DataSegment, 0, n)
	for i := 0; i < n; i++ {
		seg, err := p.dataSegment(r)
		if err != nil {
			return within(err, "data segment "+itoa(uint64(i)))
		}
		p.m.DataSegments = append(p.m.DataSegments, seg)
		p.m.DataBytes += int64(seg.Size)
	}
	return nil
}

// dataSegment reads one data segment and skips its bytes.
func (p *parser) dataSegment(r *reader) (DataSegment, error) {
	var seg DataSegment
	at := r.off()
	flags, err := r.u32()
	if err != nil {
		return seg, err
	}
	switch flags {
	case 0, 2:
		seg.Mode = ModeActive
		if flags == 2 {
			if seg.MemoryIndex, err = r.u32(); err != nil {
				return seg, err
			}
		}
		if uint64(seg.MemoryIndex) >= uint64(len(p.memories)) {
			return seg, r.failAt(at, "memory index %d out of range (%d memories)", seg.MemoryIndex, len(p.memories))
		}
		offType := I32
		if p.memories[seg.MemoryIndex].Is64 {
			offType = I64
		}
		if err := p.constExpr(r, offType); err != nil {
			return seg, within(err, "offset")
		}
	case 1:
		seg.Mode = ModePassive
	default:
		return seg, r.failAt(at, "invalid flags %d", flags)
	}
	sizeAt := r.off()
	size, err := r.u32()
	if err != nil {
		return seg, err
	}
	if uint64(size) > uint64(r.left()) {
		return seg, r.failAt(sizeAt, "size %d runs past the end of the section (%d bytes left)", size, r.left())
	}
	r.pos += int(size)
	seg.Size = int(size)
	return seg, nil
}
