package cuzk_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	cuzk "github.com/cuzk/cuzk/go"
)

// filecoinFixture is what `cuzk_fixtures filecoin-inputs OUT_DIR PARAMS_DIR` writes
// (src/bin/cuzk_fixtures.rs): real 2KiB inputs as filecoin-ffi's callers hold them and, per
// kind, fixed randomizers with the proof filecoin-proofs' own verifier accepted for them.
// scripts/test-go.sh sets CUZK_FILECOIN_FIXTURE_DIR and CUZK_TEST_PARAMS.
type filecoinFixture struct {
	dir, params string

	c1            []byte
	sector, miner uint64
	proverIDHex   string
	winning       postInputs
	window        postInputs
	snapProof     cuzk.RegisteredUpdateProof
	commROld      []byte
	commRNew      []byte
	commDNew      []byte
	snapVanillas  [][]byte
	windowPerPart int
	windowParts   int
}

type postInputs struct {
	proofType  cuzk.RegisteredPoStProof
	miner      uint64
	randomness []byte
	vanillas   [][]byte
}

var (
	filecoinOnce sync.Once
	filecoinFx   *filecoinFixture
	filecoinErr  error
)

// filecoin is the Filecoin fixture, loaded once; the test skips when the environment
// names none (only scripts/test-go.sh makes one: sealing sectors and making params).
func filecoin(t *testing.T) *filecoinFixture {
	t.Helper()
	dir := os.Getenv("CUZK_FILECOIN_FIXTURE_DIR")
	if dir == "" {
		t.Skip("CUZK_FILECOIN_FIXTURE_DIR is not set: run scripts/test-go.sh, which writes the Filecoin fixture " +
			"(cuzk_fixtures filecoin-inputs OUT_DIR PARAMS_DIR) and sets it")
	}
	filecoinOnce.Do(func() { filecoinFx, filecoinErr = loadFilecoinFixture(dir) })
	if filecoinErr != nil {
		t.Fatalf("Filecoin fixture: %v", filecoinErr)
	}
	return filecoinFx
}

func loadFilecoinFixture(dir string) (*filecoinFixture, error) {
	f := &filecoinFixture{dir: dir, params: os.Getenv("CUZK_TEST_PARAMS")}
	if f.params == "" {
		return nil, fmt.Errorf("CUZK_TEST_PARAMS (the params folder given to cuzk_fixtures) is not set")
	}
	var err error
	fail := func(e error) {
		if err == nil {
			err = e
		}
	}
	read := func(name string) []byte {
		b, e := os.ReadFile(filepath.Join(dir, name))
		fail(e)
		return b
	}
	manifest := func(name string) map[string]string {
		kv := map[string]string{}
		for _, line := range strings.Split(string(read(name)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				kv[k] = v
			}
		}
		return kv
	}
	num := func(kv map[string]string, k string) uint64 {
		n, e := strconv.ParseUint(kv[k], 10, 64)
		if e != nil {
			fail(fmt.Errorf("%s: %v", k, e))
		}
		return n
	}
	hex32 := func(kv map[string]string, k string) []byte {
		b, e := hex.DecodeString(kv[k])
		if e == nil && len(b) != 32 {
			e = fmt.Errorf("%d bytes", len(b))
		}
		if e != nil {
			fail(fmt.Errorf("%s: %v", k, e))
		}
		return b
	}
	files := func(prefix string, n uint64) [][]byte {
		var out [][]byte
		for i := uint64(0); i < n; i++ {
			out = append(out, read(fmt.Sprintf("%s_vanilla_%d.bin", prefix, i)))
		}
		return out
	}
	post := func(name, prefix string) (postInputs, map[string]string) {
		kv := manifest(name)
		return postInputs{
			proofType:  cuzk.RegisteredPoStProof(num(kv, "registered_post_proof")),
			miner:      num(kv, "miner"),
			randomness: hex32(kv, "randomness"),
			vanillas:   files(prefix, num(kv, "vanilla_proofs")),
		}, kv
	}

	f.c1 = read("porep_c1.json")
	porep := manifest("porep.txt")
	f.sector, f.miner, f.proverIDHex = num(porep, "sector_id"), num(porep, "miner"), porep["prover_id"]
	f.winning, _ = post("winning.txt", "winning")
	var window map[string]string
	f.window, window = post("window.txt", "window")
	f.windowPerPart, f.windowParts = int(num(window, "sectors_per_partition")), int(num(window, "partitions"))
	snap := manifest("snap.txt")
	f.snapProof = cuzk.RegisteredUpdateProof(num(snap, "registered_update_proof"))
	f.commROld, f.commRNew, f.commDNew = hex32(snap, "comm_r_old"), hex32(snap, "comm_r_new"), hex32(snap, "comm_d_new")
	f.snapVanillas = files("snap", num(snap, "vanilla_proofs"))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	if f.windowPerPart == 0 || f.windowParts == 0 {
		return nil, fmt.Errorf("window.txt: %d sectors per partition, %d partitions", f.windowPerPart, f.windowParts)
	}
	return f, nil
}

// expected is kind's fixed randomizers and the proof bytes they give (K_r.bin, K_s.bin,
// K_proof.bin), which cuzk_fixtures writes when it is given the params folder.
func (f *filecoinFixture) expected(t *testing.T, kind string) (r, s, proof []byte) {
	t.Helper()
	var got [3][]byte
	for i, suffix := range []string{"r", "s", "proof"} {
		name := filepath.Join(f.dir, kind+"_"+suffix+".bin")
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (cuzk_fixtures filecoin-inputs OUT_DIR PARAMS_DIR writes it)", err)
		}
		got[i] = b
	}
	r, s, proof = got[0], got[1], got[2]
	if len(proof) == 0 || len(proof)%cuzk.ProofBytes != 0 || len(r) != len(proof)/cuzk.ProofBytes*cuzk.ScalarBytes ||
		len(s) != len(r) {
		t.Fatalf("%s: %d bytes of r, %d of s for %d proof bytes", kind, len(r), len(s), len(proof))
	}
	return r, s, proof
}

// opts is kind's fixed randomizers and the test params.
func (f *filecoinFixture) opts(t *testing.T, kind string) ([]cuzk.Option, []byte) {
	r, s, proof := f.expected(t, kind)
	return []cuzk.Option{cuzk.WithRandomness(r, s), cuzk.WithParamsDir(f.params)}, proof
}

// windowPartition is partition k's share of the window: its sectors' vanilla proofs, its
// r and s, its 192 bytes of the whole window's proof.
func (f *filecoinFixture) windowPartition(t *testing.T, k int) (vanillas [][]byte, opts []cuzk.Option, proof []byte) {
	r, s, whole := f.expected(t, "window")
	lo, hi := k*f.windowPerPart, min((k+1)*f.windowPerPart, len(f.window.vanillas))
	sc := func(b []byte) []byte { return b[k*cuzk.ScalarBytes : (k+1)*cuzk.ScalarBytes] }
	return f.window.vanillas[lo:hi],
		[]cuzk.Option{cuzk.WithRandomness(sc(r), sc(s)), cuzk.WithParamsDir(f.params)},
		whole[k*cuzk.ProofBytes : (k+1)*cuzk.ProofBytes]
}

func filecoinEngine(t *testing.T) *cuzk.Engine {
	return newEngine(t, cuzk.Config{CPUDevices: 1, SynthesisThreads: 2})
}

// An engine given a recordings folder saves the WinningPoSt circuit's recording there; a
// second engine on the folder reads it and proves the same bytes.
func TestFilecoinRecordingsDirKeepsTheRecording(t *testing.T) {
	f := filecoin(t)
	dir := t.TempDir()
	w := f.winning
	for round := 0; round < 2; round++ {
		e, err := cuzk.NewEngine(cuzk.Config{CPUDevices: 1, SynthesisThreads: 2, RecordingsDir: dir,
			DeferEvaluations: cuzk.DeferOn})
		if err != nil {
			t.Fatal(err)
		}
		opts, want := f.opts(t, "winning")
		got, err := e.GenerateWinningPoStWithVanilla(context.Background(), w.proofType, w.miner, w.randomness,
			w.vanillas, opts...)
		e.Close()
		wantBytes(t, fmt.Sprintf("round %d", round), got, err, want)
		files, err := filepath.Glob(filepath.Join(dir, "*.cuzk-r1cs"))
		if err != nil || len(files) != 1 {
			t.Fatalf("round %d: recordings %v (%v), want one file", round, files, err)
		}
	}
}

func wantBytes(t *testing.T, what string, got []byte, err error, want []byte) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes, not the fixture's %d (first bytes %x, want %x)", what, len(got), len(want),
			got[:min(8, len(got))], want[:min(8, len(want))])
	}
}

func TestProverIDIsTheActorIDVarint(t *testing.T) {
	for _, c := range []struct {
		miner uint64
		want  []byte
	}{
		{0, []byte{0}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x01}},
		{1000, []byte{0xe8, 0x07}},
		{math.MaxUint64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		var want [32]byte
		copy(want[:], c.want)
		if got := cuzk.ProverID(c.miner); got != want {
			t.Errorf("ProverID(%d) = %x, want %x", c.miner, got, want)
		}
	}
	if os.Getenv("CUZK_FILECOIN_FIXTURE_DIR") != "" {
		f := filecoin(t)
		if id := cuzk.ProverID(f.miner); hex.EncodeToString(id[:]) != f.proverIDHex {
			t.Fatalf("ProverID(%d) = %x, porep.txt says %s", f.miner, id, f.proverIDHex)
		}
	}
}

// Each of the five calls, with the fixture's r and s, gives exactly the bytes
// filecoin-proofs' verifier accepted; the library verified each itself too (the default).
// Then the engine's figures count exactly the jobs that ran, by kind.
func TestFilecoinProofsMatchFixture(t *testing.T) {
	f := filecoin(t)
	e := filecoinEngine(t)
	ctx := context.Background()
	var want [cuzk.JobKinds]cuzk.KindStats
	counted := true // false once a job that started failed: the figures are then unknown
	// prove runs one call as a subtest; body says how many jobs of how many partitions
	// it ran, and sets *started before its first call.
	prove := func(name string, kind cuzk.JobKind, body func(t *testing.T, started *bool) (jobs, parts int)) {
		var started bool
		var jobs, parts int
		if t.Run(name, func(t *testing.T) { jobs, parts = body(t, &started) }) {
			k := &want[kind]
			k.JobsAdmitted += uint64(jobs)
			k.JobsFinished += uint64(jobs)
			k.PartitionsAdmitted += uint64(parts)
			k.PartitionsProved += uint64(parts)
		} else if started {
			counted = false
		}
	}
	prove("SealCommitPhase2", cuzk.KindPoRep, func(t *testing.T, started *bool) (int, int) {
		opts, want := f.opts(t, "porep")
		*started = true
		got, err := e.SealCommitPhase2(ctx, f.c1, f.sector, f.miner, opts...)
		wantBytes(t, "SealCommitPhase2", got, err, want)
		return 1, len(want) / cuzk.ProofBytes
	})
	prove("GenerateWinningPoStWithVanilla", cuzk.KindWinningPoSt, func(t *testing.T, started *bool) (int, int) {
		opts, want := f.opts(t, "winning")
		w := f.winning
		*started = true
		got, err := e.GenerateWinningPoStWithVanilla(ctx, w.proofType, w.miner, w.randomness, w.vanillas, opts...)
		wantBytes(t, "GenerateWinningPoStWithVanilla", got, err, want)
		if len(got) != cuzk.ProofBytes {
			t.Fatalf("a WinningPoSt of %d bytes", len(got))
		}
		return 1, 1
	})
	prove("GenerateWindowPoStWithVanilla", cuzk.KindWindowPoSt, func(t *testing.T, started *bool) (int, int) {
		opts, want := f.opts(t, "window")
		w := f.window
		*started = true
		got, err := e.GenerateWindowPoStWithVanilla(ctx, w.proofType, w.miner, w.randomness, w.vanillas, opts...)
		wantBytes(t, "GenerateWindowPoStWithVanilla", got, err, want)
		if len(got) != f.windowParts*cuzk.ProofBytes {
			t.Fatalf("a WindowPoSt of %d bytes for %d partitions", len(got), f.windowParts)
		}
		return 1, f.windowParts
	})
	prove("GenerateSinglePartitionWindowPoStWithVanilla", cuzk.KindWindowPoSt, func(t *testing.T, started *bool) (int, int) {
		w := f.window
		for k := 0; k < f.windowParts; k++ {
			vanillas, opts, want := f.windowPartition(t, k)
			*started = true
			got, err := e.GenerateSinglePartitionWindowPoStWithVanilla(ctx, w.proofType, w.miner, w.randomness,
				vanillas, uint(k), opts...)
			wantBytes(t, fmt.Sprintf("partition %d", k), got, err, want)
		}
		return f.windowParts, f.windowParts
	})
	prove("GenerateUpdateProofWithVanilla", cuzk.KindSnapDeals, func(t *testing.T, started *bool) (int, int) {
		opts, want := f.opts(t, "snap")
		*started = true
		got, err := e.GenerateUpdateProofWithVanilla(ctx, f.snapProof, f.commROld, f.commRNew, f.commDNew,
			f.snapVanillas, opts...)
		wantBytes(t, "GenerateUpdateProofWithVanilla", got, err, want)
		return 1, len(want) / cuzk.ProofBytes
	})
	if !counted {
		t.Fatal("a job failed: its figures are unknown, so the stats are not checked")
	}

	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	jobs, parts, circuits := uint64(0), uint64(0), uint64(0)
	for k := range want {
		if st.Kinds[k] != want[k] {
			t.Errorf("Stats().Kinds[%v] = %+v, want %+v", cuzk.JobKind(k), st.Kinds[k], want[k])
		}
		jobs, parts = jobs+want[k].JobsAdmitted, parts+want[k].PartitionsProved
		if want[k].JobsAdmitted > 0 {
			circuits++ // one circuit (and params file) per kind here
		}
	}
	if st.JobsAdmitted != jobs || st.JobsFinished != jobs || st.PartitionsProved != parts {
		t.Errorf("stats: %d jobs admitted, %d finished, %d partitions proved; want %d, %d, %d",
			st.JobsAdmitted, st.JobsFinished, st.PartitionsProved, jobs, jobs, parts)
	}
	if st.Synthesis.Count != parts || st.ParamsLoad.Count != circuits || st.SynthesisThreads != 2 ||
		st.SynthesisBusy <= 0 || st.SynthesisActive != 0 || st.SynthesisQueueDepth != 0 || st.ReadyWaiting != 0 {
		t.Errorf("synthesis figures: %+v and %+v (want %d and %d observations), busy %v, %d threads (%d active), "+
			"%d queued, %d ready", st.Synthesis, st.ParamsLoad, parts, circuits, st.SynthesisBusy,
			st.SynthesisThreads, st.SynthesisActive, st.SynthesisQueueDepth, st.ReadyWaiting)
	}
	text, err := e.Prometheus()
	if err != nil {
		t.Fatal(err)
	}
	for k := cuzk.KindPoRep; k <= cuzk.KindOther; k++ {
		for _, m := range []struct {
			name string
			v    uint64
		}{{"jobs_admitted", want[k].JobsAdmitted}, {"partitions_proved", want[k].PartitionsProved}} {
			line := fmt.Sprintf("cuzk_kind_%s_total{kind=%q} %d\n", m.name, k.String(), m.v)
			if !strings.Contains(text, line) {
				t.Errorf("the Prometheus text lacks %q", line)
			}
		}
	}
}

// The start forms: a Job with its partition count, FinishBytes and Finish agreeing,
// timings; a second job of the same circuit finds the params loaded; without verification
// the bytes are the same; fresh randomness gives another proof, which the library verified.
func TestFilecoinStartFormsAndTimings(t *testing.T) {
	f := filecoin(t)
	e := filecoinEngine(t)
	ctx := context.Background()
	w := f.winning
	opts, want := f.opts(t, "winning")
	job, err := e.GenerateWinningPoStWithVanillaStart(ctx, w.proofType, w.miner, w.randomness, w.vanillas, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if job.Partitions() != 1 {
		t.Fatalf("Partitions() = %d", job.Partitions())
	}
	got, err := job.FinishBytes(ctx)
	wantBytes(t, "FinishBytes", got, err, want)
	proofs, err := job.Finish(ctx)
	if err != nil || len(proofs) != 1 || !bytes.Equal(proofs[0][:], want) {
		t.Fatalf("Finish after FinishBytes: %d proofs, %v", len(proofs), err)
	}
	if st, proved, err := job.Poll(); err != nil || st != cuzk.JobDone || proved != 1 {
		t.Fatalf("Poll() = %v, %d, %v", st, proved, err)
	}
	tm, err := job.Timings()
	if err != nil {
		t.Fatal(err)
	}
	if tm.ParamsLoad <= 0 || tm.Synthesis <= 0 || tm.Device <= 0 || tm.Finalize <= 0 || tm.Total <= 0 ||
		tm.Total < tm.Synthesis || tm.Total < tm.Device {
		t.Fatalf("Timings() of the first WinningPoSt = %+v", tm)
	}

	job2, err := e.GenerateWinningPoStWithVanillaStart(ctx, w.proofType, w.miner, w.randomness, w.vanillas,
		append(opts, cuzk.WithoutVerification(), cuzk.WithPriority(cuzk.PriorityOther))...)
	if err != nil {
		t.Fatal(err)
	}
	defer job2.Close()
	got, err = job2.FinishBytes(ctx)
	wantBytes(t, "FinishBytes without verification", got, err, want)
	if tm, err := job2.Timings(); err != nil || tm.ParamsLoad != 0 || tm.Device <= 0 {
		t.Fatalf("Timings() of the second WinningPoSt = %+v, %v; want no params load", tm, err)
	}

	fresh, err := e.GenerateWinningPoStWithVanilla(ctx, w.proofType, w.miner, w.randomness, w.vanillas,
		cuzk.WithParamsDir(f.params))
	if err != nil {
		t.Fatalf("with fresh randomness: %v", err)
	}
	if len(fresh) != cuzk.ProofBytes || bytes.Equal(fresh, want) {
		t.Fatalf("with fresh randomness: %d bytes, equal to the fixed-randomness proof: %v", len(fresh), bytes.Equal(fresh, want))
	}
	if st, err := e.Stats(); err != nil || st.Kinds[cuzk.KindWinningPoSt].JobsFinished != 3 || st.ParamsLoad.Count != 1 {
		t.Fatalf("stats after three WinningPoSts: %+v, %v", st, err)
	}
}

// Cancelling the context of a PoRep in progress cancels the job; the engine keeps serving.
func TestFilecoinContextCancelsSealCommitPhase2(t *testing.T) {
	f := filecoin(t)
	e := filecoinEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	job, err := e.SealCommitPhase2Start(ctx, f.c1, f.sector, f.miner, cuzk.WithParamsDir(f.params))
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if job.Partitions() < 1 {
		t.Fatalf("Partitions() = %d", job.Partitions())
	}
	cancel()
	_, err = job.FinishBytes(ctx)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, cuzk.ErrCancelled) {
		t.Fatalf("FinishBytes after cancel: %v; want context.Canceled and ErrCancelled", err)
	}
	if st, _, err := job.Poll(); err != nil || st != cuzk.JobCancelled {
		t.Fatalf("Poll() = %v, %v", st, err)
	}
	// Nothing else ran on this engine: one PoRep admitted, cancelled (neither finished nor
	// failed).
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if k := st.Kinds[cuzk.KindPoRep]; k.JobsAdmitted != 1 || k.JobsFinished != 0 || k.JobsFailed != 0 ||
		k.PartitionsAdmitted != uint64(job.Partitions()) || st.JobsCancelled != 1 {
		t.Fatalf("stats after a cancelled PoRep: kinds %+v, %d cancelled", st.Kinds, st.JobsCancelled)
	}
	w := f.winning
	opts, want := f.opts(t, "winning")
	got, err := e.GenerateWinningPoStWithVanilla(context.Background(), w.proofType, w.miner, w.randomness, w.vanillas, opts...)
	wantBytes(t, "a WinningPoSt after the cancelled PoRep", got, err, want)
}

func TestFilecoinBadInputs(t *testing.T) {
	f := filecoin(t)
	e := filecoinEngine(t)
	ctx := context.Background()
	pd := cuzk.WithParamsDir(f.params)
	w, win := f.winning, f.window
	garbled := append([]byte(nil), f.c1...)
	garbled[0] = 'x'
	missing := filepath.Join(t.TempDir(), "no-params-here")
	ones := bytes.Repeat([]byte{0xff}, 32)
	short := make([]byte, 31)
	rs2 := cuzk.WithRandomness(make([]byte, 64), make([]byte, 64)) // two partitions' worth, for one
	winning := func(randomness []byte, vanillas [][]byte, opts ...cuzk.Option) error {
		_, err := e.GenerateWinningPoStWithVanilla(ctx, w.proofType, w.miner, randomness, vanillas, opts...)
		return err
	}
	snap := func(rOld, rNew, dNew []byte, vanillas [][]byte, opts ...cuzk.Option) error {
		_, err := e.GenerateUpdateProofWithVanilla(ctx, f.snapProof, rOld, rNew, dNew, vanillas, opts...)
		return err
	}
	c2 := func(c1 []byte, sector, miner uint64, opts ...cuzk.Option) error {
		_, err := e.SealCommitPhase2(ctx, c1, sector, miner, opts...)
		return err
	}
	for _, c := range []struct {
		name   string
		err    error
		want   *cuzk.Error
		needle string
	}{
		{"garbled C1 JSON", c2(garbled, f.sector, f.miner, pd), cuzk.ErrInvalidInput, ""},
		{"truncated C1 JSON", c2(f.c1[:len(f.c1)/2], f.sector, f.miner, pd), cuzk.ErrInvalidInput, ""},
		{"no C1 JSON", c2(nil, f.sector, f.miner, pd), cuzk.ErrInvalidInput, ""},
		{"C1 of another sector number", c2(f.c1, f.sector+1, f.miner, pd), cuzk.ErrInvalidInput, ""},
		{"C1 of another miner", c2(f.c1, f.sector, f.miner+1, pd), cuzk.ErrInvalidInput, ""},
		{"PoRep params missing", c2(f.c1, f.sector, f.miner, cuzk.WithParamsDir(missing)), cuzk.ErrParamsNotFound, missing},
		{"WinningPoSt params missing", winning(w.randomness, w.vanillas, cuzk.WithParamsDir(missing)), cuzk.ErrParamsNotFound, missing},
		{"empty randomness", winning(nil, w.vanillas, pd), cuzk.ErrInvalidInput, "randomness"},
		{"31 bytes of randomness", winning(short, w.vanillas, pd), cuzk.ErrInvalidInput, "randomness"},
		{"snap vanilla proofs as WinningPoSt's", winning(w.randomness, f.snapVanillas, pd), cuzk.ErrInvalidInput, ""},
		{"WinningPoSt vanilla proofs as snap's", snap(f.commROld, f.commRNew, f.commDNew, w.vanillas, pd), cuzk.ErrInvalidInput, ""},
		{"no vanilla proofs", winning(w.randomness, nil, pd), cuzk.ErrInvalidInput, "vanilla"},
		{"an empty vanilla proof", winning(w.randomness, [][]byte{{}}, pd), cuzk.ErrInvalidInput, ""},
		{"a WindowPoSt proof type for a WinningPoSt", func() error {
			_, err := e.GenerateWinningPoStWithVanilla(ctx, win.proofType, w.miner, w.randomness, w.vanillas, pd)
			return err
		}(), cuzk.ErrInvalidInput, ""},
		{"an unknown PoSt proof type", func() error {
			_, err := e.GenerateWindowPoStWithVanilla(ctx, 1000, win.miner, win.randomness, win.vanillas, pd)
			return err
		}(), cuzk.ErrInvalidArgument, "1000"},
		{"a negative PoSt proof type", func() error {
			_, err := e.GenerateWindowPoStWithVanilla(ctx, -1, win.miner, win.randomness, win.vanillas, pd)
			return err
		}(), cuzk.ErrInvalidArgument, "cuzk (Go)"},
		{"a commitment of 31 bytes", snap(short, f.commRNew, f.commDNew, f.snapVanillas, pd), cuzk.ErrInvalidArgument, "commROld"},
		{"a commitment not a field element", snap(f.commROld, ones, f.commDNew, f.snapVanillas, pd), cuzk.ErrInvalidInput, ""},
		{"the whole-window partition index", func() error {
			_, err := e.GenerateSinglePartitionWindowPoStWithVanilla(ctx, win.proofType, win.miner, win.randomness,
				win.vanillas, math.MaxUint, pd)
			return err
		}(), cuzk.ErrInvalidArgument, "partitionIndex"},
		{"r and s for two partitions of one", winning(w.randomness, w.vanillas, pd, rs2), cuzk.ErrInvalidArgument, "rs_len"},
		{"a NUL in the params folder", winning(w.randomness, w.vanillas, cuzk.WithParamsDir("a\x00b")), cuzk.ErrInvalidArgument, "NUL"},
	} {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.name, c.err, c.want, c.needle) })
	}

	// A context already done starts nothing.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.SealCommitPhase2Start(done, f.c1, f.sector, f.miner, pd); !errors.Is(err, context.Canceled) {
		t.Fatalf("SealCommitPhase2Start with a done context: %v", err)
	}
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	for k, ks := range st.Kinds {
		if ks.JobsAdmitted != 0 {
			t.Fatalf("Kinds[%v] admitted %d jobs of bad inputs", cuzk.JobKind(k), ks.JobsAdmitted)
		}
	}
	// The engine still proves.
	opts, want := f.opts(t, "winning")
	got, err := e.GenerateWinningPoStWithVanilla(ctx, w.proofType, w.miner, w.randomness, w.vanillas, opts...)
	wantBytes(t, "a WinningPoSt after the bad inputs", got, err, want)
}

// Needs no Filecoin fixture: the calls fail before any input is decoded.
func TestFilecoinCallsOnClosedHandles(t *testing.T) {
	e, err := cuzk.NewEngine(cuzk.Config{SynthesisThreads: 1, MaxReady: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.Stats()
	if err != nil || st.SynthesisThreads != 1 {
		t.Fatalf("Stats().SynthesisThreads = %d, %v; Config said 1", st.SynthesisThreads, err)
	}
	// The synthetic fixture's job, to have a Job to close.
	job, err := e.ProveStart(context.Background(), loadSRS(t), fx.parts, cuzk.WithRandomness(fx.r, fx.s))
	if err != nil {
		t.Fatal(err)
	}
	got, err := job.FinishBytes(context.Background())
	if err != nil || !bytes.Equal(got, fx.proofs) {
		t.Fatalf("FinishBytes of a ProveStart job: %d bytes, %v", len(got), err)
	}
	if tm, err := job.Timings(); err != nil || tm.Synthesis != 0 || tm.Device <= 0 || tm.Total <= 0 {
		t.Fatalf("Timings() of a ProveStart job = %+v, %v", tm, err)
	}
	job.Close()
	_, err = job.FinishBytes(context.Background())
	wantErr(t, "FinishBytes after Close", err, cuzk.ErrInvalidArgument, "used after Close")
	_, err = job.Timings()
	wantErr(t, "Timings after Close", err, cuzk.ErrInvalidArgument, "used after Close")
	var nilJob *cuzk.Job
	_, err = nilJob.FinishBytes(context.Background())
	wantErr(t, "FinishBytes of a nil Job", err, cuzk.ErrInvalidArgument, "nil")

	_, err = e.ProveStart(context.Background(), loadSRS(t), fx.parts, cuzk.WithParamsDir(t.TempDir()))
	wantErr(t, "ProveStart WithParamsDir", err, cuzk.ErrInvalidArgument, "params_dir")

	e.Close()
	ctx := context.Background()
	for name, err := range map[string]error{
		"SealCommitPhase2": func() error { _, err := e.SealCommitPhase2(ctx, []byte("{}"), 1, 1000); return err }(),
		"GenerateWinningPoStWithVanilla": func() error {
			_, err := e.GenerateWinningPoStWithVanilla(ctx, 0, 1000, make([]byte, 32), [][]byte{{1}})
			return err
		}(),
		"GenerateUpdateProofWithVanilla": func() error {
			c := make([]byte, 32)
			_, err := e.GenerateUpdateProofWithVanilla(ctx, 0, c, c, c, [][]byte{{1}})
			return err
		}(),
	} {
		wantErr(t, name+" on a closed engine", err, cuzk.ErrInvalidArgument, "used after Close")
	}
	for _, cfg := range []cuzk.Config{{SynthesisThreads: -1}, {MaxReady: -1}} {
		_, err := cuzk.NewEngine(cfg)
		wantErr(t, fmt.Sprintf("NewEngine(%+v)", cfg), err, cuzk.ErrInvalidArgument, "Config.")
	}
}
