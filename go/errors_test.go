package cuzk_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	cuzk "github.com/cuzk/cuzk/go"
)

// wantErr checks that err is a *cuzk.Error of status want whose message contains needle.
func wantErr(t *testing.T, what string, err error, want *cuzk.Error, needle string) {
	t.Helper()
	var ce *cuzk.Error
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %v", what, want.Status)
	case !errors.As(err, &ce):
		t.Errorf("%s: %T %v is not a *cuzk.Error", what, err, err)
	case !errors.Is(err, want):
		t.Errorf("%s: %v, want status %v", what, err, want.Status)
	case !strings.Contains(ce.Message, needle):
		t.Errorf("%s: message %q does not contain %q", what, ce.Message, needle)
	}
}

func TestErrorsIsMatchesByStatus(t *testing.T) {
	err := error(&cuzk.Error{Status: cuzk.StatusTimeout, Message: "cuzk_prove_finish: waited"})
	if !errors.Is(err, cuzk.ErrTimeout) || errors.Is(err, cuzk.ErrCancelled) {
		t.Fatal("errors.Is does not match by status")
	}
	if !errors.Is(err, &cuzk.Error{Status: cuzk.StatusTimeout, Message: "cuzk_prove_finish: waited"}) ||
		errors.Is(err, &cuzk.Error{Status: cuzk.StatusTimeout, Message: "other"}) {
		t.Fatal("errors.Is with a message compares the message")
	}
	if s := err.Error(); !strings.Contains(s, "CUZK_STATUS_TIMEOUT") || !strings.Contains(s, "waited") {
		t.Fatalf("Error() = %q", s)
	}
}

func TestBadSRSInputs(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.params")
	if err := os.WriteFile(corrupt, fx.params[:len(fx.params)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), fx.params...)
	for i := 100; i < 300; i++ {
		flipped[i] ^= 0x5a
	}
	_, err := cuzk.LoadSRS(corrupt, false)
	wantErr(t, "truncated params file", err, cuzk.ErrInvalidParams, "")
	_, err = cuzk.SRSFromBytes(flipped, true)
	wantErr(t, "params with corrupt points", err, cuzk.ErrInvalidParams, "")
	_, err = cuzk.LoadSRS(filepath.Join(dir, "missing.params"), false)
	wantErr(t, "missing params file", err, cuzk.ErrIO, "missing.params")
	_, err = cuzk.LoadSRS("", false)
	wantErr(t, "empty path", err, cuzk.ErrInvalidArgument, "path")
	_, err = cuzk.LoadSRS("a\x00b", false)
	wantErr(t, "path with a NUL", err, cuzk.ErrInvalidArgument, "NUL")
	_, err = cuzk.SRSFromBytes(nil, false)
	wantErr(t, "no params bytes", err, cuzk.ErrInvalidArgument, "len")
}

func TestBadVerifyInputs(t *testing.T) {
	srs := loadSRS(t)
	proof := fx.expected(0)
	_, err := srs.Verify(proof[:100], fx.public[0])
	wantErr(t, "short proof", err, cuzk.ErrInvalidArgument, "proof_len")
	garbage := make([]byte, cuzk.ProofBytes)
	for i := range garbage {
		garbage[i] = 0xff
	}
	_, err = srs.Verify(garbage, fx.public[0])
	wantErr(t, "proof that does not decode", err, cuzk.ErrInvalidProof, "")
	_, err = srs.Verify(proof, fx.public[0][:31])
	wantErr(t, "public inputs not whole scalars", err, cuzk.ErrInvalidArgument, "publicInputs")
	_, err = cuzk.Verify(nil, proof, fx.public[0])
	wantErr(t, "no verifying key", err, cuzk.ErrInvalidArgument, "vk")
	_, err = cuzk.Verify(fx.vk[:len(fx.vk)-7], proof, fx.public[0])
	if err == nil {
		t.Error("a truncated verifying key verified")
	}
	tooBig := append([]byte(nil), fx.public[0]...)
	for i := 0; i < 32; i++ {
		tooBig[i] = 0xff
	}
	_, err = srs.Verify(proof, tooBig)
	wantErr(t, "public input not below r", err, cuzk.ErrInvalidArgument, "")
}

func TestBadProveInputs(t *testing.T) {
	e := newEngine(t, cuzk.Config{})
	srs := loadSRS(t)
	ctx := context.Background()
	one := func(mutate func(p *cuzk.Partition)) []cuzk.Partition {
		parts := []cuzk.Partition{fx.clone(0)}
		mutate(&parts[0])
		return parts
	}
	cases := []struct {
		what   string
		srs    *cuzk.SRS
		parts  []cuzk.Partition
		opts   []cuzk.Option
		want   *cuzk.Error
		needle string
	}{
		{"nil SRS", nil, fx.parts, nil, cuzk.ErrInvalidArgument, "SRS is nil"},
		{"no partitions", srs, nil, nil, cuzk.ErrInvalidArgument, "`n`"},
		{"A not whole scalars", srs, one(func(p *cuzk.Partition) { p.A = p.A[:len(p.A)-1] }), nil,
			cuzk.ErrInvalidArgument, "partitions[0].A"},
		{"one scalar of Aux missing", srs, one(func(p *cuzk.Partition) { p.Aux = p.Aux[:len(p.Aux)-32] }), nil,
			cuzk.ErrInvalidAssignment, ""},
		{"B shorter than A", srs, one(func(p *cuzk.Partition) { p.B = p.B[:len(p.B)-32] }), nil,
			cuzk.ErrInvalidAssignment, ""},
		{"no input", srs, one(func(p *cuzk.Partition) { p.Input = nil }), nil,
			cuzk.ErrEmptyCircuit, "input ONE"},
		{"scalar not below r", srs, one(func(p *cuzk.Partition) {
			for i := 0; i < 32; i++ {
				p.Aux[32+i] = 0xff
			}
		}), nil, cuzk.ErrInvalidAssignment, "aux"},
		{"bitmap with a word missing", srs, one(func(p *cuzk.Partition) {
			p.AAuxDensity.Words = p.AAuxDensity.Words[:len(p.AAuxDensity.Words)-1]
		}), nil, cuzk.ErrInvalidAssignment, "a_aux_density"},
		{"bitmap with a bit past its length", srs, one(func(p *cuzk.Partition) {
			p.BAuxDensity.Words[len(p.BAuxDensity.Words)-1] = ^uint64(0)
		}), nil, cuzk.ErrInvalidAssignment, "b_aux_density"},
		{"bitmap of the wrong length", srs, one(func(p *cuzk.Partition) { p.BInputDensity.Bits++ }), nil,
			cuzk.ErrInvalidAssignment, ""},
		{"negative bitmap length", srs, one(func(p *cuzk.Partition) { p.BInputDensity.Bits = -1 }), nil,
			cuzk.ErrInvalidArgument, "BInputDensity"},
		{"r and s for the wrong number of partitions", srs, fx.parts,
			[]cuzk.Option{cuzk.WithRandomness(fx.r[:32], fx.s[:32])}, cuzk.ErrInvalidArgument, "rs_len"},
		{"r without s", srs, fx.parts, []cuzk.Option{cuzk.WithRandomness(fx.r, nil)},
			cuzk.ErrInvalidArgument, "WithRandomness"},
		{"r not whole scalars", srs, fx.parts, []cuzk.Option{cuzk.WithRandomness(fx.r[1:], fx.s[1:])},
			cuzk.ErrInvalidArgument, "WithRandomness r"},
		{"empty r and s", srs, fx.parts, []cuzk.Option{cuzk.WithRandomness([]byte{}, []byte{})},
			cuzk.ErrInvalidArgument, "WithRandomness"},
		{"unknown priority", srs, fx.parts, []cuzk.Option{cuzk.WithPriority(99)},
			cuzk.ErrInvalidArgument, "priority"},
		{"negative admission timeout", srs, fx.parts, []cuzk.Option{cuzk.WithAdmissionTimeout(-time.Second)},
			cuzk.ErrInvalidArgument, "negative"},
	}
	for _, c := range cases {
		job, err := e.ProveStart(ctx, c.srs, c.parts, c.opts...)
		if job != nil {
			job.Close()
		}
		wantErr(t, c.what, err, c.want, c.needle)
	}
	// Every refusal left the engine serving.
	job, err := e.ProveStart(ctx, srs, fx.parts, cuzk.WithRandomness(fx.r, fx.s))
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	proofs, err := job.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkProofs(t, proofs)
	if st, _ := e.Stats(); st.JobsAdmitted != 1 {
		t.Fatalf("%d jobs admitted, want only the good one", st.JobsAdmitted)
	}
}

func TestBadConfigAndBudget(t *testing.T) {
	_, err := cuzk.NewEngine(cuzk.Config{Finalizers: -1})
	wantErr(t, "negative finalizers", err, cuzk.ErrInvalidArgument, "Finalizers")
	_, err = cuzk.NewEngine(cuzk.Config{TrimInterval: -time.Second})
	wantErr(t, "negative trim interval", err, cuzk.ErrInvalidArgument, "negative")
	for name, c := range map[string]struct {
		cfg    cuzk.Config
		needle string
	}{
		// Caught in Go.
		"negative fault attempts":   {cuzk.Config{FaultMaxAttempts: -1}, "Config.FaultMaxAttempts"},
		"negative rotation faults":  {cuzk.Config{FaultOutOfRotationAfter: -3}, "Config.FaultOutOfRotationAfter"},
		"negative probe delay":      {cuzk.Config{FaultProbeDelay: -time.Millisecond}, "Config.FaultProbeDelay"},
		"negative start deadline":   {cuzk.Config{FaultStartDeadline: -time.Second}, "Config.FaultStartDeadline"},
		"unknown deferral mode":     {cuzk.Config{DeferEvaluations: cuzk.DeferOff + 1}, "Config.DeferEvaluations"},
		"negative deferral mode":    {cuzk.Config{DeferEvaluations: -1}, "Config.DeferEvaluations"},
		"recordings path with NULs": {cuzk.Config{RecordingsDir: "a\x00b"}, "Config.RecordingsDir"},
		// Caught by the library, which names the C field.
		"never out of rotation after 2": {
			cuzk.Config{CPUDevices: 1, FaultNeverOutOfRotation: true, FaultOutOfRotationAfter: 2},
			"config.fault_out_of_rotation_after",
		},
		"recordings path not UTF-8": {cuzk.Config{CPUDevices: 1, RecordingsDir: "/tmp/r\xe9cordings"}, "config.recordings_dir"},
	} {
		e, err := cuzk.NewEngine(c.cfg)
		wantErr(t, name, err, cuzk.ErrInvalidArgument, c.needle)
		if e != nil {
			e.Close()
		}
	}

	// A budget that can never hold the job.
	e := newEngine(t, cuzk.Config{MemoryBudgetBytes: 1})
	srs := loadSRS(t)
	_, err = e.ProveStart(context.Background(), srs, fx.parts)
	wantErr(t, "a job larger than the budget", err, cuzk.ErrResourceExhausted, "")
	if st, _ := e.Stats(); st.JobsRejected != 1 || st.MemoryBudgetBytes != 1 {
		t.Fatalf("stats after a refused job: %d rejected, budget %d", st.JobsRejected, st.MemoryBudgetBytes)
	}
}

func TestUseAfterClose(t *testing.T) {
	ctx := context.Background()
	e, err := cuzk.NewEngine(cuzk.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srs, err := cuzk.SRSFromBytes(fx.params, false)
	if err != nil {
		t.Fatal(err)
	}
	job, err := e.ProveStart(ctx, srs, fx.parts, cuzk.WithRandomness(fx.r, fx.s))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // Close is idempotent
		job.Close()
		srs.Close()
		e.Close()
	}
	const closed = "used after Close"
	_, err = job.Finish(ctx)
	wantErr(t, "Job.Finish", err, cuzk.ErrInvalidArgument, "Job "+closed)
	_, _, err = job.Poll()
	wantErr(t, "Job.Poll", err, cuzk.ErrInvalidArgument, closed)
	_, err = job.Cancel()
	wantErr(t, "Job.Cancel", err, cuzk.ErrInvalidArgument, closed)
	_, err = srs.Shape()
	wantErr(t, "SRS.Shape", err, cuzk.ErrInvalidArgument, "SRS "+closed)
	_, err = srs.VerifyingKey()
	wantErr(t, "SRS.VerifyingKey", err, cuzk.ErrInvalidArgument, closed)
	_, err = srs.Verify(fx.expected(0), fx.public[0])
	wantErr(t, "SRS.Verify", err, cuzk.ErrInvalidArgument, closed)
	_, err = e.Stats()
	wantErr(t, "Engine.Stats", err, cuzk.ErrInvalidArgument, "Engine "+closed)
	_, err = e.Prometheus()
	wantErr(t, "Engine.Prometheus", err, cuzk.ErrInvalidArgument, closed)
	_, err = e.ProveStart(ctx, loadSRS(t), fx.parts)
	wantErr(t, "Engine.ProveStart", err, cuzk.ErrInvalidArgument, closed)
	e2 := newEngine(t, cuzk.Config{})
	_, err = e2.ProveStart(ctx, srs, fx.parts)
	wantErr(t, "ProveStart with a closed SRS", err, cuzk.ErrInvalidArgument, "SRS "+closed)

	var nilEngine *cuzk.Engine
	_, err = nilEngine.Stats()
	wantErr(t, "nil Engine", err, cuzk.ErrInvalidArgument, "nil")
	nilEngine.Close()
	var nilJob *cuzk.Job
	_, err = nilJob.Finish(ctx)
	wantErr(t, "nil Job", err, cuzk.ErrInvalidArgument, "nil")
}

// Handles nobody closes are freed by their finalizers; with GOGC=1 (scripts/test-go.sh)
// the collector runs often enough during the other tests to exercise them too.
func TestFinalizersFreeForgottenHandles(t *testing.T) {
	for i := 0; i < 4; i++ {
		e, err := cuzk.NewEngine(cuzk.Config{})
		if err != nil {
			t.Fatal(err)
		}
		srs, err := cuzk.SRSFromBytes(fx.params, false)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.ProveStart(context.Background(), srs, fx.parts); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer goroutine runs the frees
	}
}

// Admission: an engine whose budget holds exactly one fixture job, and a second job that
// must wait for the first to end: failing fast, timing out, cut by the context's
// deadline, and waiting it out.
func TestAdmissionOptions(t *testing.T) {
	ctx := context.Background()
	srs := loadSRS(t)
	probe := newEngine(t, cuzk.Config{})
	job, err := probe.ProveStart(ctx, srs, fx.parts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	job.Close()
	st, err := probe.Stats()
	if err != nil || st.MemoryPeakBytes == 0 {
		t.Fatalf("no peak reservation after a job: %v %v", st.MemoryPeakBytes, err)
	}

	cfg := oneWorker()
	cfg.MemoryBudgetBytes = st.MemoryPeakBytes
	e := newEngine(t, cfg)
	first, err := e.ProveStart(ctx, srs, fx.parts, cuzk.WithRandomness(fx.r, fx.s))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// The first job holds the whole budget until its last partition is proved, tens of
	// milliseconds at least.
	_, err = e.ProveStart(ctx, srs, fx.parts, cuzk.WithAdmissionTimeout(0))
	wantErr(t, "fail fast on a full budget", err, cuzk.ErrResourceExhausted, "")
	_, err = e.ProveStart(ctx, srs, fx.parts, cuzk.WithAdmissionTimeout(time.Millisecond))
	wantErr(t, "admission timeout", err, cuzk.ErrTimeout, "")
	dctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err = e.ProveStart(dctx, srs, fx.parts)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, cuzk.ErrTimeout) {
		t.Errorf("admission cut by the context's deadline: %v", err)
	}
	second, err := e.ProveStart(ctx, srs, fx.parts, cuzk.WithRandomness(fx.r, fx.s),
		cuzk.WithAdmissionTimeout(cuzk.WaitForever))
	if err != nil {
		t.Fatalf("waiting for admission: %v", err)
	}
	defer second.Close()
	for _, j := range []*cuzk.Job{first, second} {
		proofs, err := j.Finish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		checkProofs(t, proofs)
	}
	if st, _ := e.Stats(); st.JobsRejected != 3 || st.AdmissionWait.Count == 0 {
		t.Fatalf("%d jobs rejected (want 3), %d admission waits", st.JobsRejected, st.AdmissionWait.Count)
	}
}
