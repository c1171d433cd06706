package wasmbin

// constExpr reads a constant expression up to and including its end
// opcode and checks that it leaves exactly one value of type want.
func (p *parser) constExpr(r *reader, want ValType) error {
	var buf [4]ValType
	stack := buf[:0]
	binop := func(at int64, t ValType, name string) error {
		n := len(stack)
		if n < 2 || stack[n-1] != t || stack[n-2] != t {
			return r.failAt(at, "%s needs two %s operands", name, t)
		}
		stack = stack[:n-1]
		return nil
	}
	for {
		at := r.off()
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0B: // end
			if len(stack) != 1 || stack[0] != want {
				return r.failAt(at, "constant expression yields %s, want (%s)", typeList(stack), want)
			}
			return nil
		case 0x41: // i32.const
			if _, err := r.s32(); err != nil {
				return err
			}
			stack = append(stack, I32)
		case 0x42: // i64.const
			if _, err := r.s64(); err != nil {
				return err
			}
			stack = append(stack, I64)
		case 0x43: // f32.const
			if _, err := r.bytes(4); err != nil {
				return err
			}
			stack = append(stack, F32)
		case 0x44: // f64.const
			if _, err := r.bytes(8); err != nil {
				return err
			}
			stack = append(stack, F64)
		case 0x23: // global.get
			idx, err := r.u32()
			if err != nil {
				return err
			}
			// As in WebAssembly 2.0 (and wasmtime without the GC
			// proposal), only imported globals are constant.
			if uint64(idx) >= uint64(len(p.globals)) {
				return r.failAt(at, "global.get %d: global index out of range (%d globals)", idx, len(p.globals))
			}
			if uint64(idx) >= uint64(p.nImportedGlobals) {
				return r.failAt(at, "global.get %d: a constant expression can only read an imported global (%d imported)", idx, p.nImportedGlobals)
			}
			g := p.globals[idx]
			if g.Mutable {
				return r.failAt(at, "global.get %d: a constant expression cannot read a mutable global", idx)
			}
			stack = append(stack, g.Type)
		case 0xD0: // ref.null
			t, err := refType(r)
			if err != nil {
				return err
			}
			stack = append(stack, t)
		case 0xD2: // ref.func
			idx, err := r.u32()
			if err != nil {
				return err
			}
			if uint64(idx) >= uint64(p.nFuncs) {
				return r.failAt(at, "ref.func %d: function index out of range (%d functions)", idx, p.nFuncs)
			}
			stack = append(stack, FuncRef)
		case 0x6A, 0x6B, 0x6C: // i32.add, i32.sub, i32.mul
			if err := binop(at, I32, [...]string{"i32.add", "i32.sub", "i32.mul"}[op-0x6A]); err != nil {
				return err
			}
		case 0x7C, 0x7D, 0x7E: // i64.add, i64.sub, i64.mul
			if err := binop(at, I64, [...]string{"i64.add", "i64.sub", "i64.mul"}[op-0x7C]); err != nil {
				return err
			}
		case 0xFD:
			sub, err := r.u32()
			if err != nil {
				return err
			}
			if sub != 12 {
				return r.failAt(at, "opcode 0xfd %d is not allowed in a constant expression", sub)
			}
			if _, err := r.bytes(16); err != nil { // v128.const
				return err
			}
			stack = append(stack, V128)
		default:
			return r.failAt(at, "opcode 0x%02x is not allowed in a constant expression", op)
		}
	}
}

// typeList formats a list of types as "(i32 i64)".
func typeList(ts []ValType) string {
	s := "("
	for i, t := range ts {
		if i > 0 {
			s += " "
		}
		s += t.String()
	}
	return s + ")"
}
