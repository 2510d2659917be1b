"""The HTML report's inline style sheet and its few lines of script (no network at view time)."""

STYLE = """
:root{--ink:#1d2329;--soft:#56606b;--rule:#d9dee3;--warn:#9a5b00;--good:#17663a;--bg:#fff;--panel:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:860px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:22px;margin:0 0 4px}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--rule);padding-bottom:4px}
h3{font-size:15px;margin:0 0 4px}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.command code{background:var(--panel);padding:2px 6px;border-radius:4px;word-break:break-all}
.facts,.why,figcaption,.id{color:var(--soft);font-size:13px}
.verdict{border-left:5px solid var(--rule);padding:2px 16px 8px;background:var(--panel);border-radius:4px}
.verdict h2{border:0;margin-top:8px}
.verdict.warn{border-color:#e69f00}.verdict.good{border-color:#009e73}
.summary{font-size:17px;font-weight:600;margin:4px 0}
.caution{color:var(--warn)}
ol.fixes{padding-left:22px}ol.fixes li{margin-bottom:14px}
.fix{margin:0}.gain{color:var(--good);font-weight:600;margin-left:6px}.gain.same{color:var(--warn)}.gain.loss{color:#b3261e}.fixid{color:var(--soft);margin-left:6px}
pre{background:var(--panel);padding:8px 10px;border-radius:4px;overflow-x:auto;white-space:pre}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid var(--rule)}
table.figures th{width:30%;font-weight:600;color:var(--soft)}
table.small{font-size:13px;margin-top:6px}
figure{margin:18px 0 22px;break-inside:avoid;page-break-inside:avoid}
svg.plot{width:100%;height:auto;display:block;background:#fff}
svg .grid{stroke:#e8ebee;stroke-width:1}svg .axis{stroke:#8a939c;stroke-width:1}
svg .tick,svg .unit,svg .name,svg .value{font:11px system-ui,sans-serif;fill:#56606b}
svg .name,svg .value{font-size:12px;fill:#1d2329}
svg .series{stroke-width:1.6;stroke-linejoin:round}svg .area{fill-opacity:.55;stroke-width:.8}
svg .band{fill:#0072b2;fill-opacity:.06}
svg .range{stroke:#1d2329;stroke-width:1.5}svg .marker{stroke:#d55e00;stroke-width:3}
svg .reference{stroke:#56606b;stroke-dasharray:4 3}
svg .cursor{stroke:#1d2329;stroke-width:.8;stroke-dasharray:2 2}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;margin:2px 0 0 62px;color:var(--soft)}
.swatch{display:inline-block;width:12px;height:3px;margin-right:6px;vertical-align:middle}
#readout{position:fixed;pointer-events:none;background:#fff;border:1px solid var(--rule);border-radius:4px;
 padding:4px 8px;font-size:12px;box-shadow:0 2px 6px rgba(0,0,0,.12)}
@media print{body{font-size:12px}main{max-width:none;padding:0}#readout{display:none}
 .verdict{background:none}pre{white-space:pre-wrap}}
"""

# Values under the pointer: the nearest point of each series, read from the chart's data-points.
SCRIPT = """
(function(){
  var readout=document.getElementById('readout');
  var ns='http://www.w3.org/2000/svg';
  function esc(t){var d=document.createElement('div');d.textContent=String(t);return d.innerHTML;}
  document.querySelectorAll('svg.plot[data-points]').forEach(function(svg){
    var data=JSON.parse(svg.getAttribute('data-points'));
    var x0=+svg.dataset.x0,x1=+svg.dataset.x1,left=+svg.dataset.left,width=+svg.dataset.width;
    var unit=svg.dataset.unit;
    var cursor=document.createElementNS(ns,'line');
    cursor.setAttribute('class','cursor');cursor.setAttribute('y1',svg.dataset.top);cursor.setAttribute('y2',svg.dataset.bottom);
    cursor.style.display='none';svg.appendChild(cursor);
    svg.addEventListener('mousemove',function(ev){
      var box=svg.getBoundingClientRect();
      var vx=(ev.clientX-box.left)/box.width*svg.viewBox.baseVal.width;
      var x=x0+(vx-left)/width*(x1-x0);
      if(vx<left||vx>left+width){cursor.style.display='none';readout.hidden=true;return;}
      cursor.setAttribute('x1',vx);cursor.setAttribute('x2',vx);cursor.style.display='';
      var lines=['<b>'+x.toFixed(2)+' s</b>'];
      data.forEach(function(s){
        var best=null;
        s.points.forEach(function(p){if(p[1]!==null&&(best===null||Math.abs(p[0]-x)<Math.abs(best[0]-x)))best=p;});
        if(best)lines.push('<span style="color:'+s.color+'">\\u25a0</span> '+esc(s.name)+': '+(+best[1].toPrecision(4))+' '+esc(unit));
      });
      readout.innerHTML=lines.join('<br>');readout.hidden=false;
      readout.style.left=(ev.clientX+14)+'px';readout.style.top=(ev.clientY+14)+'px';
    });
    svg.addEventListener('mouseleave',function(){cursor.style.display='none';readout.hidden=true;});
  });
})();
"""
