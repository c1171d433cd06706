// Command kv-counter is a Palyra-Go skill that keeps named counters in the
// storage capability (filesystem.write_roots = ["counters"]), so a count
// survives from one call, and one fresh instance, to the next. Build it
// (from the repository root) with:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o kv-counter.wasm ./sdk/examples/kv-counter
package main

import (
	"strconv"

	"github.com/palyra-go/palyra/sdk/go/skill"
)

// prefix is the storage grant, the write root declared in skill.toml.
const prefix = "counters"

// IncrementIn is the input of palyra.increment.
type IncrementIn struct {
	Name string `json:"name"`
	// By defaults to 1.
	By *int64 `json:"by"`
}

// GetIn is the input of palyra.get.
type GetIn struct {
	Name string `json:"name"`
}

// CounterOut is the output of both tools.
type CounterOut struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

func init() {
	skill.Handle("palyra.increment", increment)
	skill.Handle("palyra.get", get)
}

// parse reads a stored counter; an absent one (nil) is 0.
func parse(name string, v []byte) (int64, error) {
	if v == nil {
		return 0, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, skill.Errorf("corrupt_counter", "counter %q holds %q, not an integer", name, v)
	}
	return n, nil
}

// load returns the counter's value; an absent counter is 0.
func load(st *skill.Storage, name string) (int64, error) {
	v, found, err := st.Get(name)
	if err != nil || !found {
		return 0, err
	}
	return parse(name, v)
}

// increment adds by to the counter with compare-and-swap in a loop: read,
// add, swap from what was read, and on a lost race add to what the winner
// wrote. A get then put would lose the increments of calls running at the
// same time (other instances on this host, or on other nodes of a
// cluster, whose storage is one); the swap never does.
func increment(ctx *skill.Context, in IncrementIn) (CounterOut, error) {
	st := ctx.Storage(prefix)
	by := int64(1)
	if in.By != nil {
		by = *in.By
	}
	cur, found, err := st.Get(in.Name)
	if err != nil {
		return CounterOut{}, err
	}
	if !found {
		cur = nil // expected nil: the counter must still be absent
	}
	for {
		n, err := parse(in.Name, cur)
		if err != nil {
			return CounterOut{}, err
		}
		n += by
		swapped, current, err := st.CompareAndSwap(in.Name, cur, []byte(strconv.FormatInt(n, 10)))
		if err != nil {
			return CounterOut{}, err
		}
		if swapped {
			return CounterOut{Name: in.Name, Count: n}, nil
		}
		cur = current // another call won: add to what it wrote
	}
}

func get(ctx *skill.Context, in GetIn) (CounterOut, error) {
	n, err := load(ctx.Storage(prefix), in.Name)
	if err != nil {
		return CounterOut{}, err
	}
	return CounterOut{Name: in.Name, Count: n}, nil
}

func main() {}
