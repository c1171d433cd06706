package supervisor

import (
	"context"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/recovery"
)

// BenchmarkRecovery measures, for a Go-guest skill (the echo example) and
// a WAT skill (answer.wasm), the time from a SIGKILL of the skill's sidecar
// to its next successful call served by a new sidecar, while 8 callers
// keep 4 skills busy (the victim among them), in three set-ups side by
// side: "fresh" (no spare, no standby: a restart starts a process and
// loads the module), "spare" (a spare sidecar takes the restart: LoadSkill
// only) and "standby" (the default: the loaded standby is promoted). One
// iteration is one kill:
//
//	go test -run='^$' -bench=Recovery -benchtime=20x ./host/supervisor/
//
// It reports the median, p90 and max recovery in ms, the calls of the
// other skills that failed (must be 0) and the victim's failed calls.
func BenchmarkRecovery(b *testing.B) {
	// One cache for every run, holding both modules precompiled (as
	// install leaves them): every start, the first too, loads from it.
	watTg, cache := precompiled(b)
	echoTg := echoTarget(b)
	if out, err := exec.Command(binPath, "precompile", "--wasm", echoTg.ModulePath, "--cache-dir", cache, "--sha256", echoTg.ModuleSHA256).CombinedOutput(); err != nil {
		b.Fatalf("precompile: %v: %s", err, out)
	}
	goTarget := func(id string) Target {
		tg := echoTg
		tg.SkillID = id
		return tg
	}
	watTarget := func(id string) Target {
		tg := watTg
		tg.SkillID = id
		return tg
	}
	modes := []struct {
		name           string
		spare, standby int
	}{{"fresh", -1, -1}, {"spare", 1, -1}, {"standby", 1, 1}}
	for _, victim := range []string{"go_echo", "wat_answer"} {
		for _, mode := range modes {
			b.Run(victim+"/"+mode.name, func(b *testing.B) {
				benchRecovery(b, victim, Config{CacheDir: cache, SpareSidecars: mode.spare, Standby: mode.standby,
					CrashLoopThreshold: 1 << 20, StartTimeout: time.Minute, HealthInterval: -1, IdleTimeout: -1},
					goTarget, watTarget)
			})
		}
	}
}

// benchRecovery is one sub-benchmark of BenchmarkRecovery.
func benchRecovery(b *testing.B, victim string, cfg Config, goTarget, watTarget func(string) Target) {
	s := newSup(b, cfg)
	skills := []struct {
		tg    Target
		tool  string
		input []byte
	}{
		{goTarget("load.go1"), "palyra.echo", echoInput},
		{goTarget("load.go2"), "palyra.echo", echoInput},
		{watTarget("load.wat1"), "t", []byte(`{}`)},
		{watTarget("load.wat2"), "t", []byte(`{}`)},
	}
	vi := 0
	if victim == "wat_answer" {
		vi = 2
	}
	ctx := context.Background()
	for _, sk := range skills {
		if _, err := s.Call(ctx, sk.tg, sk.tool, sk.input, CallOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	v := skills[vi]
	probe := recovery.Probe{
		PID: func(context.Context) (int, error) { return s.State(v.tg.SkillID, v.tg.Version).PID, nil },
		Call: func(ctx context.Context) (int, error) {
			res, err := s.Call(ctx, v.tg, v.tool, v.input, CallOptions{})
			if err != nil {
				return 0, err
			}
			return res.PID, nil
		},
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var otherCalls, victimFails atomic.Int64
	var mu sync.Mutex
	var otherErrs []error
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sk := skills[i%len(skills)]
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := s.Call(ctx, sk.tg, sk.tool, sk.input, CallOptions{})
				switch {
				case i%len(skills) == vi:
					if err != nil {
						victimFails.Add(1)
					}
				case err != nil:
					mu.Lock()
					otherErrs = append(otherErrs, err)
					mu.Unlock()
				default:
					otherCalls.Add(1)
				}
			}
		}()
	}
	var samples []recovery.Sample
	var failure error
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		// Let the restarted sidecar fill its spare instances, and
		// the supervisor make its spare or standby: each kill hits
		// the steady state.
		time.Sleep(300 * time.Millisecond)
		for wait := time.Now().Add(10 * time.Second); time.Now().Before(wait); time.Sleep(5 * time.Millisecond) {
			if (cfg.Standby <= 0 || standbyPID(s, v.tg) != 0) && (cfg.SpareSidecars <= 0 || len(sparePIDs(s)) > 0) {
				break
			}
		}
		b.StartTimer()
		mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		smp, err := recovery.Measure(mctx, probe)
		cancel()
		if err != nil {
			failure = err
			break
		}
		samples = append(samples, smp)
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	if failure != nil {
		b.Fatal(failure)
	}
	if len(otherErrs) > 0 {
		b.Errorf("%d calls of other skills failed, first: %v", len(otherErrs), otherErrs[0])
	}
	sum := recovery.Summarize(samples, 100*time.Millisecond)
	b.ReportMetric(float64(sum.Median.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(sum.P90.Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(sum.Max.Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(len(otherErrs)), "other-fails")
	b.ReportMetric(0, "ns/op")
	b.Logf("%s: %s; other skills: %d calls, %d failed; victim's load calls failed: %d; cache hit on restart: %v",
		victim, sum, otherCalls.Load(), len(otherErrs), victimFails.Load(), s.State(v.tg.SkillID, v.tg.Version).CacheHit)
}
