module github.com/evolverl/evolve

go 1.26
