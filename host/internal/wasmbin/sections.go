package wasmbin

func (p *parser) custom(r *reader) error {
	at := r.off()
	if len(p.m.CustomSections) >= p.lim.MaxCustomSections {
		return r.overLimit(at, "MaxCustomSections", "custom section count", uint64(len(p.m.CustomSections))+1, p.lim.MaxCustomSections)
	}
	name, err := r.name("custom section name")
	if err != nil {
		return err
	}
	p.m.CustomSections = append(p.m.CustomSections, CustomSection{Name: name, Offset: r.off(), Size: r.left()})
	r.pos = len(r.buf)
	return nil
}

func (p *parser) types(r *reader) error {
	n, err := r.count("type count", "MaxTypes", p.lim.MaxTypes, 3)
	if err != nil {
		return err
	}
	p.m.Types = make([]FuncType, 0, n)
	for i := 0; i < n; i++ {
		ft, err := p.funcType(r)
		if err != nil {
			return within(err, "type "+itoa(uint64(i)))
		}
		p.m.Types = append(p.m.Types, ft)
	}
	return nil
}

func (p *parser) funcType(r *reader) (FuncType, error) {
	var ft FuncType
	at := r.off()
	form, err := r.byte()
	if err != nil {
		return ft, err
	}
	switch form {
	case 0x60:
	case 0x4E, 0x4F, 0x50, 0x5E, 0x5F:
		return ft, r.failAt(at, "GC proposal type form 0x%02x is not supported", form)
	default:
		return ft, r.failAt(at, "invalid type form 0x%02x, want 0x60 (func)", form)
	}
	if ft.Params, err = p.valTypes(r, "parameter count", "MaxParams", p.lim.MaxParams); err != nil {
		return ft, err
	}
	ft.Results, err = p.valTypes(r, "result count", "MaxResults", p.lim.MaxResults)
	return ft, err
}

func (p *parser) valTypes(r *reader, what, limitName string, max int) ([]ValType, error) {
	n, err := r.count(what, limitName, max, 1)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	ts := make([]ValType, n)
	for i := range ts {
		if ts[i], err = valType(r); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

func valType(r *reader) (ValType, error) {
	at := r.off()
	b, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch t := ValType(b); t {
	case I32, I64, F32, F64, V128, FuncRef, ExternRef:
		return t, nil
	}
	return nullableRef(r, at, b, "value type")
}

func refType(r *reader) (ValType, error) {
	at := r.off()
	b, err := r.byte()
	if err != nil {
		return 0, err
	}
	if t := ValType(b); t.IsRef() {
		return t, nil
	}
	return nullableRef(r, at, b, "reference type")
}

// nullableRef reads the rest of a type that starts with the byte b, which
// is not one of the one-byte types: the long forms (ref null func) and
// (ref null extern) are the same types as funcref and externref, and
// wasmtime accepts them; every other form needs the function-references
// or GC proposal.
func nullableRef(r *reader, at int64, b byte, what string) (ValType, error) {
	if b == 0x63 && r.left() > 0 {
		if t := ValType(r.buf[r.pos]); t.IsRef() {
			r.pos++
			return t, nil
		}
	}
	if b == 0x63 || b == 0x64 || (b >= 0x69 && b <= 0x6E) || (b >= 0x71 && b <= 0x74) {
		return 0, r.failAt(at, "%s 0x%02x of the function-references or GC proposal is not supported", what, b)
	}
	return 0, r.failAt(at, "invalid %s 0x%02x", what, b)
}

func (p *parser) typeIndex(r *reader) (uint32, error) {
	at := r.off()
	idx, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(idx) >= uint64(len(p.m.Types)) {
		return 0, r.failAt(at, "type index %d out of range (%d types)", idx, len(p.m.Types))
	}
	return idx, nil
}

// addItem counts one more function, table, memory, global or tag against
// its limit.
func (p *parser) addItem(r *reader, at int64, n *int, limitName, what string, max int) error {
	if *n >= max {
		return r.overLimit(at, limitName, what, uint64(*n)+1, max)
	}
	*n++
	return nil
}

func (p *parser) imports(r *reader) error {
	n, err := r.count("import count", "MaxImports", p.lim.MaxImports, 4)
	if err != nil {
		return err
	}
	p.m.Imports = make([]Import, 0, n)
	for i := 0; i < n; i++ {
		var im Import
		if im.Module, err = r.name("import module name"); err != nil {
			return err
		}
		if im.Name, err = r.name("import name"); err != nil {
			return err
		}
		if err := p.importDesc(r, &im); err != nil {
			return within(err, "import "+quote(im.Module)+" "+quote(im.Name))
		}
		p.m.Imports = append(p.m.Imports, im)
	}
	return nil
}

// importDesc reads the kind and type of an import.
func (p *parser) importDesc(r *reader, im *Import) error {
	at := r.off()
	kind, err := r.byte()
	if err != nil {
		return err
	}
	im.Kind = ExternKind(kind)
	switch im.Kind {
	case KindFunc:
		if im.TypeIndex, err = p.typeIndex(r); err != nil {
			return err
		}
		return p.addItem(r, at, &p.nFuncs, "MaxFunctions", "function count", p.lim.MaxFunctions)
	case KindTable:
		t, err := p.tableType(r)
		if err != nil {
			return err
		}
		im.Table = &t
		p.tables = append(p.tables, t)
		return p.addItem(r, at, &p.nTables, "MaxTables", "table count", p.lim.MaxTables)
	case KindMemory:
		mt, err := memoryType(r)
		if err != nil {
			return err
		}
		im.Memory = &mt
		p.memories = append(p.memories, mt)
		return p.addItem(r, at, &p.nMemories, "MaxMemories", "memory count", p.lim.MaxMemories)
	case KindGlobal:
		g, err := globalType(r)
		if err != nil {
			return err
		}
		im.Global = &g
		p.globals = append(p.globals, g)
		return p.addItem(r, at, &p.nImportedGlobals, "MaxGlobals", "global count", p.lim.MaxGlobals)
	case KindTag:
		if im.TypeIndex, err = p.tagType(r); err != nil {
			return err
		}
		return p.addItem(r, at, &p.nTags, "MaxTags", "tag count", p.lim.MaxTags)
	}
	return r.failAt(at, "invalid import kind 0x%02x", kind)
}

func (p *parser) functions(r *reader) error {
	at := r.off()
	n, err := r.count("function count", "MaxFunctions", p.lim.MaxFunctions, 1)
	if err != nil {
		return err
	}
	if p.nFuncs+n > p.lim.MaxFunctions {
		return r.overLimit(at, "MaxFunctions", "function count", uint64(p.nFuncs+n), p.lim.MaxFunctions)
	}
	p.m.Functions = make([]uint32, n)
	for i := range p.m.Functions {
		if p.m.Functions[i], err = p.typeIndex(r); err != nil {
			return within(err, "function "+itoa(uint64(p.nFuncs+i)))
		}
	}
	p.nFuncs += n
	return nil
}

func (p *parser) tableSection(r *reader) error {
	at := r.off()
	n, err := r.count("table count", "MaxTables", p.lim.MaxTables, 3)
	if err != nil {
		return err
	}
	if p.nTables+n > p.lim.MaxTables {
		return r.overLimit(at, "MaxTables", "table count", uint64(p.nTables+n), p.lim.MaxTables)
	}
	p.m.Tables = make([]TableType, 0, n)
	for i := 0; i < n; i++ {
		t, err := p.tableType(r)
		if err != nil {
			return err
		}
		p.m.Tables = append(p.m.Tables, t)
		p.tables = append(p.tables, t)
	}
	p.nTables += n
	return nil
}

func (p *parser) tableType(r *reader) (TableType, error) {
	var t TableType
	if r.left() > 0 && r.buf[r.pos] == 0x40 {
		return t, r.fail("table with an initializer expression (function-references proposal) is not supported")
	}
	var err error
	if t.Elem, err = refType(r); err != nil {
		return t, err
	}
	at := r.off()
	flags, err := r.byte()
	if err != nil {
		return t, err
	}
	switch flags {
	case 0x00, 0x01, 0x04, 0x05:
	default:
		return t, r.failAt(at, "invalid table limits flags 0x%02x", flags)
	}
	t.HasMax = flags&0x01 != 0
	t.Is64 = flags&0x04 != 0
	minAt := r.off()
	if t.Min, t.Max, err = limits(r, t.HasMax, t.Is64); err != nil {
		return t, err
	}
	if t.HasMax && t.Min > t.Max {
		return t, r.failAt(minAt, "table minimum %d is greater than its maximum %d", t.Min, t.Max)
	}
	if t.Min > uint64(p.lim.MaxTableEntries) {
		return t, r.overLimit(minAt, "MaxTableEntries", "table minimum size", t.Min, p.lim.MaxTableEntries)
	}
	return t, nil
}

// limits reads a minimum and, when hasMax, a maximum, as u32 or u64.
func limits(r *reader, hasMax, is64 bool) (min, max uint64, err error) {
	read := func() (uint64, error) {
		if is64 {
			return r.u64()
		}
		v, err := r.u32()
		return uint64(v), err
	}
	if min, err = read(); err != nil {
		return 0, 0, err
	}
	if hasMax {
		if max, err = read(); err != nil {
			return 0, 0, err
		}
	}
	return min, max, nil
}

func (p *parser) memorySection(r *reader) error {
	at := r.off()
	n, err := r.count("memory count", "MaxMemories", p.lim.MaxMemories, 2)
	if err != nil {
		return err
	}
	if p.nMemories+n > p.lim.MaxMemories {
		return r.overLimit(at, "MaxMemories", "memory count", uint64(p.nMemories+n), p.lim.MaxMemories)
	}
	p.m.Memories = make([]MemoryType, 0, n)
	for i := 0; i < n; i++ {
		mt, err := memoryType(r)
		if err != nil {
			return err
		}
		p.m.Memories = append(p.m.Memories, mt)
		p.memories = append(p.memories, mt)
	}
	p.nMemories += n
	return nil
}

func memoryType(r *reader) (MemoryType, error) {
	var mt MemoryType
	at := r.off()
	flags, err := r.byte()
	if err != nil {
		return mt, err
	}
	if flags&^0x07 != 0 {
		if flags&^0x0F == 0 {
			return mt, r.failAt(at, "memory limits flags 0x%02x: custom page sizes are not supported", flags)
		}
		return mt, r.failAt(at, "invalid memory limits flags 0x%02x", flags)
	}
	mt.HasMax = flags&0x01 != 0
	mt.Shared = flags&0x02 != 0
	mt.Is64 = flags&0x04 != 0
	minAt := r.off()
	if mt.Min, mt.Max, err = limits(r, mt.HasMax, mt.Is64); err != nil {
		return mt, err
	}
	pages, bits := uint64(maxPages32), 32
	if mt.Is64 {
		pages, bits = maxPages64, 64
	}
	switch {
	case mt.Min > pages:
		return mt, r.failAt(minAt, "memory minimum of %d pages exceeds the %d pages of a %d-bit memory", mt.Min, pages, bits)
	case mt.HasMax && mt.Max > pages:
		return mt, r.failAt(minAt, "memory maximum of %d pages exceeds the %d pages of a %d-bit memory", mt.Max, pages, bits)
	case mt.HasMax && mt.Min > mt.Max:
		return mt, r.failAt(minAt, "memory minimum %d is greater than its maximum %d", mt.Min, mt.Max)
	case mt.Shared && !mt.HasMax:
		return mt, r.failAt(at, "shared memory must have a maximum")
	}
	return mt, nil
}

func globalType(r *reader) (GlobalType, error) {
	var g GlobalType
	var err error
	if g.Type, err = valType(r); err != nil {
		return g, err
	}
	at := r.off()
	mut, err := r.byte()
	if err != nil {
		return g, err
	}
	switch mut {
	case 0x00:
	case 0x01:
		g.Mutable = true
	default:
		return g, r.failAt(at, "invalid global mutability 0x%02x", mut)
	}
	return g, nil
}

func (p *parser) tagType(r *reader) (uint32, error) {
	at := r.off()
	attr, err := r.byte()
	if err != nil {
		return 0, err
	}
	if attr != 0 {
		return 0, r.failAt(at, "invalid tag attribute 0x%02x", attr)
	}
	idx, err := p.typeIndex(r)
	if err != nil {
		return 0, err
	}
	if ft := p.m.Types[idx]; len(ft.Results) != 0 {
		return 0, r.failAt(at, "tag type %s has results", ft)
	}
	return idx, nil
}

func (p *parser) tagSection(r *reader) error {
	at := r.off()
	n, err := r.count("tag count", "MaxTags", p.lim.MaxTags, 2)
	if err != nil {
		return err
	}
	if p.nTags+n > p.lim.MaxTags {
		return r.overLimit(at, "MaxTags", "tag count", uint64(p.nTags+n), p.lim.MaxTags)
	}
	p.m.Tags = make([]TagType, 0, n)
	for i := 0; i < n; i++ {
		idx, err := p.tagType(r)
		if err != nil {
			return within(err, "tag "+itoa(uint64(p.nTags+i)))
		}
		p.m.Tags = append(p.m.Tags, TagType{TypeIndex: idx})
	}
	p.nTags += n
	return nil
}

func (p *parser) globalSection(r *reader) error {
	at := r.off()
	n, err := r.count("global count", "MaxGlobals", p.lim.MaxGlobals, 4)
	if err != nil {
		return err
	}
	if len(p.globals)+n > p.lim.MaxGlobals {
		return r.overLimit(at, "MaxGlobals", "global count", uint64(len(p.globals)+n), p.lim.MaxGlobals)
	}
	p.m.Globals = make([]GlobalType, 0, n)
	for i := 0; i < n; i++ {
		g, err := globalType(r)
		if err == nil {
			err = p.constExpr(r, g.Type)
		}
		if err != nil {
			return within(err, "global "+itoa(uint64(len(p.globals))))
		}
		p.m.Globals = append(p.m.Globals, g)
		p.globals = append(p.globals, g)
	}
	return nil
}

func (p *parser) exports(r *reader) error {
	n, err := r.count("export count", "MaxExports", p.lim.MaxExports, 3)
	if err != nil {
		return err
	}
	p.m.Exports = make([]Export, 0, n)
	seen := make(map[string]struct{}, n)
	for i := 0; i < n; i++ {
		at := r.off()
		var ex Export
		if ex.Name, err = r.name("export name"); err != nil {
			return err
		}
		if _, dup := seen[ex.Name]; dup {
			return r.failAt(at, "duplicate export name %s", quote(ex.Name))
		}
		seen[ex.Name] = struct{}{}
		kindAt := r.off()
		kind, err := r.byte()
		if err != nil {
			return err
		}
		ex.Kind = ExternKind(kind)
		var space int
		switch ex.Kind {
		case KindFunc:
			space = p.nFuncs
		case KindTable:
			space = p.nTables
		case KindMemory:
			space = p.nMemories
		case KindGlobal:
			space = len(p.globals)
		case KindTag:
			space = p.nTags
		default:
			return r.failAt(kindAt, "export %s: invalid export kind 0x%02x", quote(ex.Name), kind)
		}
		idxAt := r.off()
		if ex.Index, err = r.u32(); err != nil {
			return err
		}
		if uint64(ex.Index) >= uint64(space) {
			return r.failAt(idxAt, "export %s: %s index %d out of range (%d %s)", quote(ex.Name), ex.Kind, ex.Index, space, plural(ex.Kind))
		}
		p.m.Exports = append(p.m.Exports, ex)
	}
	return nil
}

func (p *parser) start(r *reader) error {
	at := r.off()
	idx, err := r.u32()
	if err != nil {
		return err
	}
	if uint64(idx) >= uint64(p.nFuncs) {
		return r.failAt(at, "start function index %d out of range (%d functions)", idx, p.nFuncs)
	}
	if ft, ok := p.m.FuncType(idx); !ok || len(ft.Params) != 0 || len(ft.Results) != 0 {
		return r.failAt(at, "start function %d has type %s, want () -> ()", idx, ft)
	}
	p.m.Start = &idx
	return nil
}

// plural names the items of a kind, for errors.
func plural(k ExternKind) string {
	if k == KindMemory {
		return "memories"
	}
	if k == KindFunc {
		return "functions"
	}
	return k.String() + "s"
}
