# The soak's samples against time, from tools/soak.sh's CSV.
# usage: gnuplot -e "data='out/soak-T/samples.csv'; output='out/soak-T/soak.png'" tools/soak_plot.gp
set terminal pngcairo size 900,900 noenhanced font ",11"
set output output
set datafile separator ","
set key off
set grid
set xlabel "minutes"
set multiplot layout 3,1 title "xconnd soak: resident memory, open descriptors, store size"
set ylabel "RSS MiB"
set yrange [0:*]
set key top left
plot data using ($1/60):($2/1024) skip 1 with linespoints pt 7 ps 0.4 title "VmRSS", \
     data using ($1/60):($7/1024) skip 1 with linespoints pt 7 ps 0.4 title "RssAnon (heap)"
set key off
set ylabel "open fds"
plot data using ($1/60):3 skip 1 with linespoints pt 7 ps 0.4
set ylabel "data.mdb MiB"
set key top left
plot data using ($1/60):($4/1048576) skip 1 with linespoints pt 7 ps 0.4 title "file", \
     data using ($1/60):($5/1048576) skip 1 with lines title "on disk"
unset multiplot
