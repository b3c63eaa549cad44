# Throughput and p99 latency against the socket count, from the data tools/bench_report.py writes.
# usage: gnuplot -e "data='bench/results/DATE-plot.dat'; prefix='bench/results/DATE'" tools/bench_plots.gp
set terminal pngcairo size 900,540 noenhanced font ",11"
set logscale x 2
set xlabel "sockets"
set key outside right top
set grid
names = "ceiling invoke inbound outbound mixed"

set output prefix . "-throughput.png"
set title "operations per second (ceiling: ws_ceiling frames echoed)"
set ylabel "ops/s"
plot for [i=1:5] data using 1:(column(2*i)) with linespoints title word(names, i)

set output prefix . "-latency.png"
set title "p99 latency"
set ylabel "ms"
set logscale y 10
plot for [i=1:5] data using 1:(column(2*i+1)) with linespoints title word(names, i)
