package main

import (
	"flag"
	"fmt"
	"os"

	"servelab/hwspecs"
	"servelab/modelspecs"
	"servelab/sim"
)

// stepFlags are the step model's knobs, shared by every subcommand that simulates.
type stepFlags struct {
	model, gpu, modelConfig string
	effCompute, effMem      float64
	overhead, dtypeBytes    float64
	tp                      int
}

func addStepFlags(fs *flag.FlagSet) *stepFlags {
	f := &stepFlags{}
	fs.StringVar(&f.model, "model", modelspecs.Default, "model name (see `servelab models`)")
	fs.StringVar(&f.gpu, "gpu", hwspecs.Default, "GPU name (see `servelab models`)")
	fs.StringVar(&f.modelConfig, "model-config", "", "Hugging Face config.json to use instead of --model")
	fs.Float64Var(&f.effCompute, "eff-compute", sim.DefaultEffCompute, "fraction of peak FLOP/s reached")
	fs.Float64Var(&f.effMem, "eff-mem", sim.DefaultEffMem, "fraction of peak memory bandwidth reached")
	fs.Float64Var(&f.overhead, "overhead", sim.DefaultOverhead, "fixed seconds per iteration")
	fs.Float64Var(&f.dtypeBytes, "dtype-bytes", sim.DefaultDtypeBytes, "bytes per weight and KV element (2 = bf16)")
	fs.IntVar(&f.tp, "tp", 1, "tensor-parallel degree")
	return f
}

// stepModel resolves the names and builds a validated step model.
func (f *stepFlags) stepModel() (sim.StepModel, error) {
	var m modelspecs.Model
	var err error
	if f.modelConfig != "" {
		data, rerr := os.ReadFile(f.modelConfig)
		if rerr != nil {
			return sim.StepModel{}, fmt.Errorf("--model-config: %w", rerr)
		}
		m, err = modelspecs.FromHFConfig(data, f.modelConfig)
	} else {
		m, err = modelspecs.Get(f.model)
	}
	if err != nil {
		return sim.StepModel{}, err
	}
	g, err := hwspecs.Get(f.gpu)
	if err != nil {
		return sim.StepModel{}, err
	}
	s := sim.StepModel{Model: m, GPU: g, EffCompute: f.effCompute, EffMem: f.effMem,
		Overhead: f.overhead, DtypeBytes: f.dtypeBytes, TP: f.tp}
	return s.Prepare()
}
