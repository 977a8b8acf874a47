#!/bin/bash
. "$TESTBED_LIB"
. "$(dirname "$TESTBED_LIB")/xfer.sh"
mkdir -p "$BETA_IN"; mount -t tmpfs -o size=80%,mode=0750 tmpfs "$BETA_IN"; chown rdmaxfer: "$BETA_IN"
head -c $((256*1024*1024)) /dev/urandom > $SRC/p.bin
cp "$(dirname "$TESTBED_LIB")/rdmaxferd-exp" /usr/local/sbin/rdmaxferd-exp
for u in rdmaxferd.service rdmaxferd@beta.service; do
  mkdir -p /etc/systemd/system/$u.d
done
peers_configure
cpu() { awk '{ printf "%.2f/%.2f", $14/100, $15/100 }' /proc/$1/stat; }
run() {
  local label=$1
  systemctl restart rdmaxferd.service rdmaxferd@beta.service
  a=$(systemctl show -P MainPID $ALPHA_UNIT); b=$(systemctl show -P MainPID $BETA_UNIT)
  line=$(send_ok $SRC/p.bin --as $label.bin)
  echo "$label: $line   cpu user/sys alpha $(cpu $a) beta $(cpu $b) iou:$(for t in /proc/$b/task/*; do [[ $(cat $t/comm) == iou* ]] && awk '{ printf " %.2f", $15/100 }' $t/stat; done)"
  rm -f $BETA_IN/$label.bin
}
run base
for u in rdmaxferd.service rdmaxferd@beta.service; do
  printf '[Service]\nEnvironment=RDMAXFER_NOHASH=1\nExecStart=\nExecStart=/usr/local/sbin/rdmaxferd-exp --config /etc/rdmaxferd/%s\n' "$([[ $u == *beta* ]] && echo beta.conf || echo rdmaxferd.conf)" > /etc/systemd/system/$u.d/exp.conf
done
systemctl daemon-reload
run nohash
rm -rf /etc/systemd/system/rdmaxferd*.d; systemctl daemon-reload
run base2
systemctl stop rdmaxferd.service rdmaxferd@beta.service
# perftest cpu
( /usr/bin/time -f "server %U user %S sys %e wall" ib_send_bw -R -e -p 18515 -s 1048576 -n 256 -t 16 -F -d "$BETA_DEV" --source_ip "$BETA_ADDR" > /tmp/s.txt 2>/tmp/s.time & )
sleep 2
/usr/bin/time -f "client %U user %S sys %e wall" ib_send_bw -R -e -p 18515 -s 1048576 -n 256 -t 16 -F -d "$ALPHA_DEV" --source_ip "$ALPHA_ADDR" "$BETA_ADDR" | tail -2
sleep 1; cat /tmp/s.time
